"""A RAGAS judge's embedding options and the encoder they name, without importing ragas (the judges are built, and
their models described, before ragas is imported: `judges.loading`)."""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.errors import InputError
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway
from ragjudge.retrieval.encoders import BUNDLED_MODELS, BUNDLED_NAME, LiteLLMEncoder, SentenceTransformerEncoder


class EmbeddingOptions(BaseModel):
    """A judge spec's embedding options (the same names as a dense retriever's)."""

    model_config = ConfigDict(extra="ignore")

    encoder: Literal["sentence-transformers", "litellm"] = "sentence-transformers"
    embedding_model: str = "minilm"
    """`minilm` (the bundled all-MiniLM-L6-v2), a sentence-transformers name or folder, or with encoder=litellm a
    litellm embedding model (openai/text-embedding-3-small), called through the run's gateway."""

    @classmethod
    def of(cls, spec: JudgeSpec) -> EmbeddingOptions:
        try:
            return cls.model_validate(spec.options)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise InputError(error["msg"], file=spec.source, field=f"options.{where}") from None


@cache
def _sentence_encoder(model: str) -> SentenceTransformerEncoder:
    """One per model in the process: judges that share a model load it once."""
    return SentenceTransformerEncoder(model)


def encoder_for(options: EmbeddingOptions, gateway: LLMGateway | None) -> SentenceTransformerEncoder | LiteLLMEncoder:
    if options.encoder == "litellm":
        return LiteLLMEncoder(options.embedding_model, gateway=gateway)
    return _sentence_encoder(options.embedding_model)


def encoder_name(options: EmbeddingOptions) -> str:
    """The embedding model as results record it."""
    if options.encoder == "litellm":
        return options.embedding_model
    return BUNDLED_NAME if options.embedding_model in BUNDLED_MODELS else options.embedding_model


def warm(options: EmbeddingOptions) -> None:
    """Load a local encoder's model and tokenizer now (a background job: `judges.loading`), so the item that first
    needs a vector finds it loaded. An API encoder has nothing to load. A model that fails to load fails again, with
    its message, where it is used."""
    if options.encoder == "litellm":
        return
    encoder = _sentence_encoder(options.embedding_model)
    try:  # each loads under the encoder's lock: an encode needing it meanwhile waits for this load, not another
        encoder.batch_tokenizer()
        encoder.forward_pass()
    except Exception:  # noqa: BLE001  (reported where the model is used)
        return
