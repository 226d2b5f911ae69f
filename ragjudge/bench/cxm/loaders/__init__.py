"""Load each CXMArena task from a data folder: the public release's tables or ragjudge's plain JSONL files.

One module per task; `common` holds what they share (conversations, ids, articles). See `common` for how
ids are assigned and errors reported.
"""

from ragjudge.bench.cxm.loaders.common import ARTICLE_FILES, load_articles, message_id_speaker, normalize_message_id
from ragjudge.bench.cxm.loaders.intent import TAXONOMY_SPLITS, load_intent, load_taxonomies
from ragjudge.bench.cxm.loaders.kb import load_pairs, read_pair
from ragjudge.bench.cxm.loaders.quality import load_quality, parse_answer
from ragjudge.bench.cxm.loaders.search import load_rag, load_search
from ragjudge.bench.cxm.loaders.tools import load_tool_cases, load_tool_catalog

__all__ = ["ARTICLE_FILES", "TAXONOMY_SPLITS", "load_articles", "load_intent", "load_pairs", "load_quality",
           "load_rag", "load_search", "load_taxonomies", "load_tool_cases", "load_tool_catalog",
           "message_id_speaker", "normalize_message_id", "parse_answer", "read_pair"]
