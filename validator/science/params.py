"""Parameter counts of a decoder-only transformer from its Hugging Face config.json: one formula, documented here.

Notation from config.json: V vocab_size, H hidden_size, L num_hidden_layers, A num_attention_heads,
K num_key_value_heads (default A), D head_dim (default H / A), F intermediate_size (dense MLP),
E routed experts (num_experts | n_routed_experts | num_local_experts), k experts per token
(num_experts_per_tok), Fe moe_intermediate_size (default F), S shared experts.

Per layer
  attention, standard (MHA, GQA, MQA):  H*A*D (q) + 2*H*K*D (k, v) + A*D*H (o)
      + biases: A*D + 2*K*D for q, k, v when the architecture has them (qwen2, qwen2_moe, or
        attention_bias: true, which also gives o a bias of H), + 2*D for q/k norms (qwen3, qwen3_moe)
  attention, MLA (DeepSeek-V2/V3: kv_lora_rank present), with Dn qk_nope_head_dim, Dr
      qk_rope_head_dim, Dv v_head_dim, Rq q_lora_rank, Rkv kv_lora_rank:
      q: H*Rq + Rq (norm) + Rq*A*(Dn+Dr), or H*A*(Dn+Dr) when Rq is null
      kv: H*(Rkv+Dr) + Rkv (norm) + Rkv*A*(Dn+Dv);   o: A*Dv*H
  MLP, gated (SwiGLU/GeGLU, every architecture this reads): 3*H*F
  MoE layer: E*3*H*Fe (routed) + S*3*H*Fs (shared; Fs = shared_expert_intermediate_size, else Fe)
      + H*E (router) + E (DeepSeek-V3's noaux_tc correction bias) + H (Qwen2-MoE's shared-expert gate)
      Which layers are MoE: DeepSeek — layer i >= first_k_dense_replace and i % moe_layer_freq == 0;
      Qwen-MoE — i not in mlp_only_layers and (i+1) % decoder_sparse_step == 0; others — all.
  norms: 2*H (RMSNorm before attention and MLP)
Whole model: L layers + V*H (embedding) + V*H (lm head, unless tie_word_embeddings) + H (final norm).
Multi-token-prediction modules (num_nextn_predict_layers) are not counted: they are not part of
the model that serves or trains the main objective (DeepSeek's 671B leaves them out too).

Active parameters (per token): the same sum with only k of the E routed experts in each MoE
layer (shared experts, router and everything else count in full), embeddings included, as
Mistral and Qwen state theirs (Mixtral 12.9B, Qwen1.5-MoE 2.7B). For a dense model active =
total. DeepSeek states its 36.6B without the input embedding; `input_embedding` is returned so a
reader can convert.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from validator.errors import Refusal
from validator.science import bounds
from validator.science.bounds import Bound

# config.json's tie_word_embeddings is often absent; then the architecture's config class default applies.
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text"})
_QKV_BIAS = frozenset({"qwen2", "qwen2_moe"})
_QK_NORM = frozenset({"qwen3", "qwen3_moe"})
EXPERT_KEYS = ("num_experts", "n_routed_experts", "num_local_experts")


class ConfigError(Refusal, ValueError):
    """config.json lacks a field the formula needs, or holds an unusable value."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"`{field}`: {message}")
        self.field = field


@dataclass(frozen=True)
class Architecture:
    """What the catalog records about a model's shape."""

    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    vocab: int
    experts: int | None = None  # routed experts per MoE layer; None for a dense model
    experts_per_token: int | None = None
    shared_experts: int | None = None
    moe_layers: int | None = None
    attention: str = "gqa"  # mha | gqa | mqa | mla
    tied_embeddings: bool = False


@dataclass(frozen=True)
class ParamCount:
    total: int
    active: int
    input_embedding: int
    architecture: Architecture

    @property
    def moe(self) -> bool:
        return self.architecture.experts is not None


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """Multimodal configs nest the language model under text_config (Gemma 3, Llama 4, Qwen-VL)."""
    inner = config.get("text_config")
    return inner if isinstance(inner, Mapping) and "hidden_size" in inner else config


# Every integer the formula reads, and its physical bound (validator/science/bounds.py): checked before
# any arithmetic, so no product overflows a float and no loop runs past the largest real model's layers.
BOUND_OF: dict[str, Bound] = {
    "num_hidden_layers": bounds.LAYERS,
    "hidden_size": bounds.HIDDEN,
    "vocab_size": bounds.VOCAB,
    "num_attention_heads": bounds.HEADS,
    "num_key_value_heads": bounds.HEADS,
    "head_dim": bounds.HEAD_DIM,
    "qk_nope_head_dim": bounds.HEAD_DIM,
    "qk_rope_head_dim": bounds.HEAD_DIM,
    "v_head_dim": bounds.HEAD_DIM,
    "kv_lora_rank": bounds.RANK,
    "q_lora_rank": bounds.RANK,
    "intermediate_size": bounds.MLP,
    "moe_intermediate_size": bounds.MLP,
    "shared_expert_intermediate_size": bounds.MLP,
    "num_experts": bounds.EXPERTS,
    "n_routed_experts": bounds.EXPERTS,
    "num_local_experts": bounds.EXPERTS,
    "num_experts_per_tok": bounds.EXPERTS,
    "n_shared_experts": bounds.EXPERTS,
    "first_k_dense_replace": bounds.LAYERS,
    "moe_layer_freq": bounds.LAYERS,
    "decoder_sparse_step": bounds.LAYERS,
}
_ANY_COUNT = Bound("a count", 2**31, "no config.json field the formula reads is larger than the bounds above")


def _int(config: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = config.get(key, default)
    if value is None:
        if default is None:
            raise ConfigError(key, "missing; is this the model's config.json?")
        value = default  # another field's value (moe_intermediate_size falls back to intermediate_size): checked too
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(key, f"must be a non-negative integer, not {bounds.shown(value)}")
    bound = BOUND_OF.get(key, _ANY_COUNT)
    if value > bound.high:
        raise ConfigError(key, str(bounds.out_of_bounds(value, bound)))
    return value


def _attention(c: Mapping[str, Any], model_type: str, h: int, heads: int) -> tuple[int, str, int]:
    """(parameters per layer, kind, KV heads)."""
    kv_heads = _int(c, "num_key_value_heads", heads)
    if c.get("kv_lora_rank") is not None:  # MLA
        nope, rope = _int(c, "qk_nope_head_dim"), _int(c, "qk_rope_head_dim")
        dv, rkv = _int(c, "v_head_dim"), _int(c, "kv_lora_rank")
        rq = c.get("q_lora_rank")
        if rq is None:
            q = h * heads * (nope + rope)
        else:
            rq = _int(c, "q_lora_rank")
            q = h * rq + rq + rq * heads * (nope + rope)
        kv = h * (rkv + rope) + rkv + rkv * heads * (nope + dv)
        return q + kv + heads * dv * h, "mla", kv_heads
    if heads == 0 or (c.get("head_dim") is None and h % heads):
        raise ConfigError("num_attention_heads", f"{heads} does not divide hidden_size {h}; give head_dim")
    d = _int(c, "head_dim", h // heads)
    params = h * heads * d + 2 * h * kv_heads * d + heads * d * h
    if c.get("attention_bias") is True:
        params += heads * d + 2 * kv_heads * d + h
    elif model_type in _QKV_BIAS:
        params += heads * d + 2 * kv_heads * d
    if model_type in _QK_NORM:
        params += 2 * d
    kind = "mha" if kv_heads == heads else ("mqa" if kv_heads == 1 else "gqa")
    return params, kind, kv_heads


def _is_moe_layer(c: Mapping[str, Any], dense_only: frozenset[int], i: int) -> bool:
    if "first_k_dense_replace" in c or "moe_layer_freq" in c:
        freq = _int(c, "moe_layer_freq", 1) or 1
        return i >= _int(c, "first_k_dense_replace", 0) and i % freq == 0
    if i in dense_only:
        return False
    step = _int(c, "decoder_sparse_step", 1) or 1
    return (i + 1) % step == 0


def _mlp_only_layers(c: Mapping[str, Any]) -> frozenset[int]:
    """Qwen-MoE's dense layers, as a set (a list as long as the file allows would make each lookup slow)."""
    value = c.get("mlp_only_layers") or []
    if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in value):
        raise ConfigError("mlp_only_layers", f"must be a list of layer numbers, not {bounds.shown(value)}")
    return frozenset(value)


def count(config: Mapping[str, Any]) -> ParamCount:
    """Total and active parameters of the model config.json describes (module docstring)."""
    model_type = str(config.get("model_type", ""))
    c = _text_config(config)
    model_type = str(c.get("model_type", model_type))
    vocab, h, layers = _int(c, "vocab_size"), _int(c, "hidden_size"), _int(c, "num_hidden_layers")
    heads = _int(c, "num_attention_heads")
    dense_only = _mlp_only_layers(c)
    attention, kind, kv_heads = _attention(c, model_type, h, heads)
    norms = 2 * h
    experts = next((c[k] for k in EXPERT_KEYS if c.get(k)), None)
    total = active = 0
    moe_layers = 0
    shared = None
    per_token = None
    for i in range(layers):  # at most bounds.LAYERS.high: _int checked it
        if experts is None or not _is_moe_layer(c, dense_only, i):
            mlp = 3 * h * _int(c, "intermediate_size")
            total += attention + norms + mlp
            active += attention + norms + mlp
            continue
        moe_layers += 1
        e = _int(c, next(k for k in EXPERT_KEYS if c.get(k)))
        per_token = _int(c, "num_experts_per_tok")
        if per_token > e:
            raise ConfigError("num_experts_per_tok", f"{per_token} is more than the {e} experts")
        fe = _int(c, "moe_intermediate_size", c.get("intermediate_size"))
        expert = 3 * h * fe
        shared_size = c.get("shared_expert_intermediate_size")
        if shared_size:
            shared = 1
            shared_params = 3 * h * _int(c, "shared_expert_intermediate_size") + h  # + its sigmoid gate
        else:
            shared = _int(c, "n_shared_experts", 0) or None
            shared_params = (shared or 0) * expert
        router = h * e + (e if c.get("topk_method") == "noaux_tc" else 0)
        total += attention + norms + e * expert + shared_params + router
        active += attention + norms + per_token * expert + shared_params + router
    tied = c.get("tie_word_embeddings", config.get("tie_word_embeddings", model_type in _TIED_BY_DEFAULT))
    embedding = vocab * h
    outside = embedding + (0 if tied else embedding) + h
    architecture = Architecture(
        layers,
        h,
        heads,
        kv_heads,
        vocab,
        experts if moe_layers else None,
        per_token if moe_layers else None,
        shared if moe_layers else None,
        moe_layers or None,
        kind,
        bool(tied),
    )
    return ParamCount(total + outside, active + outside, embedding, architecture)
