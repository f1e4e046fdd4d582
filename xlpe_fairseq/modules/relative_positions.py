"""Relative position schemes for self-attention, and the attention that applies them.

Each scheme acts on one self-attention layer's heads, shaped ``(B, H, T, d)`` for queries and
``(B, H, S, d)`` for keys and values, where query ``t`` sits at position ``S - T + t`` (so an
incremental decoding step, ``T = 1``, is the last position of the ``S`` cached keys):

* :class:`ShawRelativePositions` (Shaw, Uszkoreit, Vaswani 2018, Eq. 3-6): learned
  ``a^K_{clip(j-i, k)}`` added to each key and, optionally, ``a^V`` to each value, one table
  per layer shared by its heads;
* :class:`RotaryPositions` (Su et al. 2021, RoFormer Eq. 14-16): queries and keys rotated by
  their position, so ``q_i·k_j`` depends on ``j - i`` only;
* :class:`ALiBiPositions` (Press, Smith, Lewis 2022, §3): ``-m_h |j - i|`` added to head ``h``'s
  scores, with the paper's geometric slopes (causal in a decoder, where ``j > i`` is masked
  anyway; symmetric in an encoder);
* :class:`T5RelativeBias` (Raffel et al. 2020, §2.1): one learned scalar per head and
  log-spaced distance bucket, bidirectional buckets in an encoder, causal ones in a decoder.

Only ``j - i`` enters each scheme (:func:`relative_distances`), so a left-padded source gives
its real tokens the same scores as an unpadded one, and cached decoder keys never change.

:class:`PositionalSelfAttention` is fairseq's ``MultiheadAttention`` with the same parameters
and incremental cache, computing scores itself: fairseq's fast path hands the weights to
``F.multi_head_attention_forward``, which has no room for a per-head bias or a value term, and
its ``attn_mask`` is one mask for all heads that fairseq's encoder layer rewrites to -1e8.
"""
import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn.functional as F
from fairseq import utils
from fairseq.modules import MultiheadAttention
from torch import Tensor, nn

from ..plugin_errors import OptionError


def relative_distances(query_len: int, key_len: int, device=None) -> Tensor:
    """``(T, S)`` LongTensor of ``j - i``: key position minus query position, where the ``T``
    queries are the last ``T`` of the ``S`` key positions."""
    keys = torch.arange(key_len, device=device)
    return keys[None, :] - keys[key_len - query_len:, None]


class RelativePositionScheme(nn.Module):
    """What a scheme may change; the defaults change nothing (plain scaled dot product)."""

    # whether value_term may return a tensor (else attention can use torch's fused kernel)
    has_value_term = False

    def rotate(self, q: Tensor, k: Tensor, offset: int) -> Tuple[Tensor, Tensor]:
        """Queries and new keys, both ``(B, H, T, d)`` at positions ``offset + t``, before the
        keys are cached."""
        return q, k

    def score_bias(self, q: Tensor, key_len: int) -> Optional[Tensor]:
        """Added to the scores ``(B, H, T, S)``, broadcastable; ``q`` is scaled."""
        return None

    def value_term(self, probs: Tensor) -> Optional[Tensor]:
        """Added to ``probs @ V``, ``(B, H, T, d)``; ``probs`` is ``(B, H, T, S)``."""
        return None


class ShawRelativePositions(RelativePositionScheme):
    """``e_ij = q_i (k_j + a^K_ij)ᵀ / √d`` and ``z_i = Σ_j α_ij (v_j + a^V_ij)`` with
    ``a_ij = w_{clip(j - i, k)}`` (Shaw et al. 2018, Eq. 3-6).

    Only ``2k + 1`` rows exist, so queries meet the table once (``(B, H, T, 2k+1)``) and the
    result is gathered per distance, and attention weights are summed per distance before
    meeting ``a^V``: Shaw et al.'s §3.3 cost, without a ``(T, S, d)`` tensor."""

    def __init__(self, head_dim: int, max_relative_positions: int, values: bool):
        super().__init__()
        if max_relative_positions < 1:
            raise OptionError(
                f"--max-relative-positions must be at least 1, got {max_relative_positions}"
            )
        self.max_relative_positions = max_relative_positions
        rows = 2 * max_relative_positions + 1
        self.relative_keys = nn.Embedding(rows, head_dim)
        self.relative_values = nn.Embedding(rows, head_dim) if values else None
        self.has_value_term = values
        # Shaw et al. give no initialisation; fairseq's for its attention projections
        for table in (self.relative_keys, self.relative_values):
            if table is not None:
                nn.init.xavier_uniform_(table.weight)

    def _rows(self, query_len: int, key_len: int, device) -> Tensor:
        k = self.max_relative_positions
        return relative_distances(query_len, key_len, device).clamp(-k, k) + k

    def score_bias(self, q: Tensor, key_len: int) -> Tensor:
        rows = self._rows(q.size(2), key_len, q.device)
        per_row = torch.matmul(q, self.relative_keys.weight.t())  # (B, H, T, 2k+1)
        return per_row.gather(-1, rows.expand(q.shape[:2] + rows.shape))

    def value_term(self, probs: Tensor) -> Optional[Tensor]:
        if self.relative_values is None:
            return None
        rows = self._rows(probs.size(2), probs.size(3), probs.device)
        per_row = probs.new_zeros(probs.shape[:3] + (self.relative_values.num_embeddings,))
        per_row.scatter_add_(-1, rows.expand(probs.shape), probs)
        return torch.matmul(per_row, self.relative_values.weight.to(probs))


class RotaryPositions(RelativePositionScheme):
    """Rotary position embedding (Su et al. 2021, Eq. 14-16): feature pairs
    ``(x_p, x_{p + d/2})`` of a query or key at position ``m`` rotated by ``m θ_p`` with
    ``θ_p = base^{-2p/d}``. The half-split pairing (GPT-NeoX's) spans the same rotations as
    RoFormer's interleaved pairs, up to a fixed permutation of ``W_Q`` and ``W_K``."""

    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        if head_dim % 2:
            raise OptionError(f"rotary positions need an even head dimension, got {head_dim}")
        self.register_buffer(
            "inv_freq", base ** (-torch.arange(0, head_dim, 2).double() / head_dim),
            persistent=False,
        )

    def _rotate(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        first, second = x.chunk(2, dim=-1)
        return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)

    def rotate(self, q: Tensor, k: Tensor, offset: int) -> Tuple[Tensor, Tensor]:
        positions = torch.arange(offset, offset + q.size(2), device=q.device).double()
        angles = positions[:, None] * self.inv_freq.to(q.device)[None, :]  # (T, d/2)
        cos, sin = angles.cos().to(q.dtype), angles.sin().to(q.dtype)
        return self._rotate(q, cos, sin), self._rotate(k, cos, sin)


def alibi_slopes(num_heads: int) -> Tensor:
    """Press et al. (2022, §3): ``2^(-8h/n)`` for ``h = 1..n`` when ``n`` is a power of 2;
    otherwise those of the power of 2 below ``n`` and every other slope of twice that."""
    def geometric(n):
        return [2 ** (-8 * h / n) for h in range(1, n + 1)]

    lower = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = geometric(lower)
    if lower < num_heads:
        slopes += geometric(2 * lower)[0::2][: num_heads - lower]
    return torch.tensor(slopes)


class ALiBiPositions(RelativePositionScheme):
    """``-m_h |j - i|`` on head ``h``'s scores (Press et al. 2022, Eq. in §3); no parameters."""

    def __init__(self, num_heads: int):
        super().__init__()
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)

    def score_bias(self, q: Tensor, key_len: int) -> Tensor:
        distance = relative_distances(q.size(2), key_len, q.device).abs().to(q.dtype)
        return -self.slopes.to(q)[:, None, None] * distance


def t5_buckets(distances: Tensor, bidirectional: bool, num_buckets: int,
               max_distance: int) -> Tensor:
    """T5's bucket of each ``j - i`` (Raffel et al. 2020, §2.1; their code's
    ``_relative_position_bucket``): exact below ``num_buckets / 2`` (of each direction),
    log-spaced up to ``max_distance``, one bucket beyond; a causal decoder sees ``j <= i``."""
    buckets = torch.zeros_like(distances)
    if bidirectional:
        num_buckets //= 2
        buckets += (distances > 0).long() * num_buckets
        distances = distances.abs()
    else:
        distances = (-distances).clamp(min=0)
    max_exact = num_buckets // 2
    log_ratio = torch.log(distances.float().clamp(min=1) / max_exact) / math.log(
        max_distance / max_exact)
    large = (max_exact + (log_ratio * (num_buckets - max_exact)).long()).clamp(
        max=num_buckets - 1)
    return buckets + torch.where(distances < max_exact, distances, large)


class T5RelativeBias(RelativePositionScheme):
    """One learned scalar per head and distance bucket added to the scores (Raffel et al.
    2020, §2.1). T5 shares it across a stack's layers; the model passes one instance to all."""

    def __init__(self, num_heads: int, bidirectional: bool, num_buckets: int = 32,
                 max_distance: int = 128):
        super().__init__()
        self.bidirectional = bidirectional
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.relative_attention_bias = nn.Embedding(num_buckets, num_heads)
        nn.init.normal_(self.relative_attention_bias.weight, std=num_heads ** -0.5)

    def score_bias(self, q: Tensor, key_len: int) -> Tensor:
        buckets = t5_buckets(relative_distances(q.size(2), key_len, q.device),
                             self.bidirectional, self.num_buckets, self.max_distance)
        return self.relative_attention_bias(buckets).permute(2, 0, 1).to(q)  # (H, T, S)


class PositionalSelfAttention(MultiheadAttention):
    """fairseq's self-attention (same parameters, names and incremental cache) whose scores
    and outputs a :class:`RelativePositionScheme` shapes; see the module docstring."""

    def __init__(self, *args, relative_positions: RelativePositionScheme, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.self_attention or self.bias_k is not None or self.add_zero_attn:
            raise ValueError("relative positions apply to plain self-attention only")
        self.relative_positions = relative_positions

    @classmethod
    def sharing(cls, attention: MultiheadAttention,
                relative_positions: RelativePositionScheme) -> "PositionalSelfAttention":
        """``attention`` (a layer's fairseq self-attention) with relative positions: its
        projections are shared, not copied, so parameter names and values stay as they were."""
        positional = cls(attention.embed_dim, attention.num_heads,
                         dropout=attention.dropout_module.p, self_attention=True,
                         relative_positions=relative_positions)
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            setattr(positional, name, getattr(attention, name))
        return positional

    def forward(self, query: Tensor, key: Optional[Tensor], value: Optional[Tensor],
                key_padding_mask: Optional[Tensor] = None,
                incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None,
                need_weights: bool = True, static_kv: bool = False,
                attn_mask: Optional[Tensor] = None, before_softmax: bool = False,
                need_head_weights: bool = False):
        """fairseq's signature; ``key`` and ``value`` are ``query`` (self-attention)."""
        if static_kv or before_softmax:
            raise NotImplementedError("relative positions do not support static_kv or "
                                      "before_softmax")
        need_weights = need_weights or need_head_weights
        tgt_len, bsz, embed_dim = query.size()

        def heads(x: Tensor) -> Tensor:  # (T, B, C) -> (B, H, T, d)
            return x.view(tgt_len, bsz, self.num_heads, self.head_dim).permute(1, 2, 0, 3)

        q = heads(self.q_proj(query) * self.scaling)
        k, v = heads(self.k_proj(query)), heads(self.v_proj(query))

        saved_state = (self._get_input_buffer(incremental_state)
                       if incremental_state is not None else None)
        past = (saved_state["prev_key"] if saved_state is not None and "prev_key" in saved_state
                else None)
        q, k = self.relative_positions.rotate(q, k, 0 if past is None else past.size(2))
        if saved_state is not None:
            # fairseq's cache layout (B, H, S, d), so reorder_incremental_state works as is
            if past is not None:
                k = torch.cat([past, k], dim=2)
                v = torch.cat([saved_state["prev_value"], v], dim=2)
            key_padding_mask = MultiheadAttention._append_prev_key_padding_mask(
                key_padding_mask=key_padding_mask,
                prev_key_padding_mask=saved_state.get("prev_key_padding_mask"),
                batch_size=bsz, src_len=k.size(2), static_kv=False,
            )
            saved_state["prev_key"], saved_state["prev_value"] = k, v
            saved_state["prev_key_padding_mask"] = key_padding_mask
            self._set_input_buffer(incremental_state, saved_state)
        src_len = k.size(2)

        bias = self.relative_positions.score_bias(q, src_len)
        if attn_mask is not None:
            bias = attn_mask if bias is None else bias + attn_mask
        if key_padding_mask is not None:
            padding = torch.zeros(key_padding_mask.shape, dtype=q.dtype, device=q.device)
            padding = padding.masked_fill_(key_padding_mask.to(torch.bool), float("-inf"))
            padding = padding[:, None, None, :]
            bias = padding if bias is None else bias + padding
        if not need_weights and not self.relative_positions.has_value_term:
            # torch's fused kernel, as fairseq's own attention takes when no weights are asked
            dropout_p = (self.dropout_module.p if self.training
                         or self.dropout_module.apply_during_inference else 0.0)
            attn = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=dropout_p,
                                                  scale=1.0)
            return self.out_proj(attn.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)), None

        scores = torch.matmul(q, k.transpose(2, 3))  # (B, H, T, S)
        if bias is not None:
            scores = scores + bias
        weights_float = utils.softmax(scores, dim=-1)
        probs = self.dropout_module(weights_float.type_as(scores))
        attn = torch.matmul(probs, v)
        value_term = self.relative_positions.value_term(probs)
        if value_term is not None:
            attn = attn + value_term
        attn = self.out_proj(attn.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim))

        weights: Optional[Tensor] = None
        if need_weights:
            weights = weights_float.transpose(0, 1)  # (H, B, T, S), as fairseq returns them
            if not need_head_weights:
                weights = weights.mean(dim=0)
        return attn, weights
