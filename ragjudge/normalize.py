"""One normalisation for every lexical matcher (IDK patterns, DialSim's offline judge, CXM's intent mapping).

Matching by words breaks on how text is typed ("don’t" vs "don't", "can not" vs "cannot", a no-break space);
`normalize_for_matching` removes these differences and nothing else: NFKC; apostrophes and single quotes
(’ ‘ ‚ ‛ ′ ʼ ` ´) as `'`, double quotes (“ ” „ ‟ ″) as `"`; hyphens and dashes (‐ ‑ ‒ – — ― − and small/full-width
forms) as `-`; zero-width characters and soft hyphens removed; white space runs as one space, stripped; "can not"
as "cannot" (not in "can not only ..., but also"); `str.casefold`. So write patterns in lower case with straight
quotes, "cannot" and single spaces. Guillemets (« ») stay: CXM intent labels use » as a level separator.
"""

from __future__ import annotations

import re
import unicodedata

_TRANSLATE = str.maketrans({
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc\u0060\u00b4", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad", None),
})
_SPACE = re.compile(r"\s+")
_CAN_NOT = re.compile(r"\bcan not\b(?! only\b)")


def normalize_for_matching(text: str) -> str:
    """`text` with quotes, dashes, spacing, "can not" and case made uniform (see the module's docstring)."""
    text = unicodedata.normalize("NFKC", text.translate(_TRANSLATE))
    text = _SPACE.sub(" ", text).strip().casefold()
    return _CAN_NOT.sub("cannot", text)
