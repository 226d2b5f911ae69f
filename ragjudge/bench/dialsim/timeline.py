"""A show as the simulation walks it: sessions in order, parsed into utterances, labelled by date and number."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragjudge.bench.dialsim.longdialqa import SessionData, ShowData
from ragjudge.bench.dialsim.script import NamesMode, Renamer, ShowInfo, Utterance, parse_utterances, session_numbers


@dataclass(frozen=True)
class Session:
    index: int
    """Position in the show (0-based): sessions are played in this order."""
    number: int
    """The official per-date session number shown to the agent ("Session #2")."""
    utterances: tuple[Utterance, ...]
    data: SessionData

    @property
    def date(self) -> str:
        return self.data.date

    @property
    def episode(self) -> str:
        return self.data.episode

    @property
    def label(self) -> str:
        return f"[Date: {self.date}, Session #{self.number}]"


@dataclass
class Timeline:
    show: str
    info: ShowInfo
    names: NamesMode
    sessions: list[Session]
    source: ShowData
    renamer: Renamer = field(default_factory=Renamer)

    @classmethod
    def build(cls, data: ShowData, info: ShowInfo, names: NamesMode) -> Timeline:
        numbers = session_numbers([s.date for s in data.sessions])
        sessions = [Session(index=i, number=n, utterances=tuple(parse_utterances(s.script)), data=s)
                    for i, (s, n) in enumerate(zip(data.sessions, numbers, strict=True))]
        return cls(show=data.name, info=info, names=names, sessions=sessions, source=data,
                   renamer=Renamer(info.mapping(names)))

    @property
    def agent(self) -> str:
        """Whom the agent plays, as the data names them (before renaming)."""
        return self.info.agent

    def utterance_text(self, session: Session, i: int) -> str:
        return self.renamer(session.utterances[i].text)

    def history(self, session: Session, upto: int | None = None) -> str:
        """The session's utterances (the first `upto`), renamed, each ending with a newline: how the official
        simulator accumulates a session."""
        shown = session.utterances if upto is None else session.utterances[:upto]
        return "".join(self.renamer(u.text) + "\n" for u in shown)
