"""InXL's learned input position, ``PE_IN = tanh(PE_abs U + PE_XL V)`` (Ding, Wang, Tao 2020,
Eq. 7), and the statistics that show whether it trains."""
import torch
from torch import Tensor, nn

from ..io import OptionError

XLPE_INITS = ("identity", "xavier")
# --xlpe-init's default, chosen by measurement with UV_LR_SCALE (docs/models.md)
XLPE_INIT = "xavier"
# --xlpe-uv-lr-scale's default for new runs, chosen by measurement (docs/models.md): at 512
# wide and 6+6 layers U and V stepped as every other weight saturated PE_IN and slowed InXL;
# a quarter of the step keeps pace there and keeps the 128-wide gains that a tenth gave up
UV_LR_SCALE = 0.25


class InputXLPositions(nn.Module):
    """``PE_IN-XL = tanh(PE_abs U + PE_XL V)`` (Eq. 7), with ``U`` and ``V`` initialised by
    ``--xlpe-init``:

    - ``xavier`` (default): both Xavier-uniform, as fairseq initialises attention
      projections: ``PE_IN`` starts as a random mix of both sinusoids, from which a linear
      probe reads both positions back. The paper gives no initialisation; with
      ``--xlpe-uv-lr-scale 0.25`` it keeps pace with the Transformer at 512 wide and at 128
      wide gains more than ``identity`` (docs/models.md).
    - ``identity``: ``U = I``, ``V = 0``. InXL starts as the Transformer with its sinusoid
      squashed by tanh (``PE_IN = tanh(PE_abs)``) and learns how much of ``PE_XL`` to mix in
      (the default before).

    Building ``U`` and ``V`` draws nothing from torch's global random stream (``xavier`` draws
    from a generator of its own, seeded from the run's seed), so an InXL or Combination model
    of seed ``S`` starts every other weight, the decoder's included, where the Transformer of
    seed ``S`` starts: a same-seed comparison differs in the input position alone.

    ``U`` and ``V`` multiply each token's sinusoid rows, as Eq. 7 writes it. Projecting the
    table once and gathering its rows would save multiply-adds, but the gather's backward
    accumulates with atomics on a GPU, whose order varies between runs.

    ``lr_scale`` (``--xlpe-uv-lr-scale``) slows ``U`` and ``V`` down: they are stored divided
    by it and multiplied back here, so Adam, whose step on a weight is about the learning rate
    whatever its gradient's size, moves them ``lr_scale`` times as far a step. A step moves
    each unit of ``PE_abs U`` by up to the learning rate times the sum over ``d`` inputs, so at
    a fixed learning rate a wider model's input saturates sooner. ``fairseq-train`` defaults
    to ``UV_LR_SCALE`` (0.25), with which InXL keeps pace with the Transformer at 512 wide and
    6+6 layers where 1 lagged, and gains as 1 does at 128 wide (docs/models.md); the module's
    own default, 1, is Eq. 7 as printed.

    ``xl_warmup_updates`` (``--xlpe-xl-warmup-updates N``) brings the ``PE_XL V`` term in
    linearly, weighted by ``min(1, update / N)``: at update 0 ``PE_IN`` is ``tanh(PE_abs U)``
    alone (with the identity init, the Transformer's sinusoid squashed by tanh), from update
    ``N`` on it is Eq. 7's. fairseq hands the update to every module through
    ``set_num_updates``, in training and when a checkpoint is loaded (from the update it was
    saved at), so a reloaded model weights the term as it was trained.
    """

    def __init__(self, embed_dim: int, init: str = XLPE_INIT, lr_scale: float = 1.0,
                 xl_warmup_updates: int = 0):
        super().__init__()
        if not 0 < lr_scale <= 1:
            raise OptionError(f"--xlpe-uv-lr-scale must be in (0, 1], got {lr_scale}")
        if xl_warmup_updates < 0:
            raise OptionError("--xlpe-xl-warmup-updates must be 0 (off) or more, got "
                              f"{xl_warmup_updates}")
        self.lr_scale = lr_scale
        self.xl_warmup_updates = xl_warmup_updates
        self.xl_weight = 0.0 if xl_warmup_updates else 1.0
        if init not in XLPE_INITS:
            raise OptionError(f"--xlpe-init must be one of {XLPE_INITS}, got {init!r}")
        # U and V leave the global random stream as they found it: every layer built after
        # them starts from the Transformer's weights of the same seed
        with torch.random.fork_rng(devices=[]):
            self.u = nn.Linear(embed_dim, embed_dim, bias=False)
            self.v = nn.Linear(embed_dim, embed_dim, bias=False)
        with torch.no_grad():
            if init == "identity":
                self.u.weight.copy_(torch.eye(embed_dim))
                self.v.weight.zero_()
            else:
                own_stream = torch.Generator().manual_seed((torch.initial_seed() + 1) % 2**64)
                nn.init.xavier_uniform_(self.u.weight, generator=own_stream)
                nn.init.xavier_uniform_(self.v.weight, generator=own_stream)
            self.u.weight.div_(lr_scale)
            self.v.weight.div_(lr_scale)

    def set_num_updates(self, num_updates: int):
        """Weight the ``PE_XL V`` term for the update training is at (fairseq calls this)."""
        if self.xl_warmup_updates:
            self.xl_weight = min(1.0, num_updates / self.xl_warmup_updates)

    def pre_activation(self, pe_abs: Tensor, pe_xl: Tensor) -> Tensor:
        """``PE_abs U + PE_XL V``, ``(B, T, C)``: what the tanh of Eq. 7 reads."""
        xl_term = self.v(pe_xl)
        pre = self.u(pe_abs) + (xl_term if self.xl_weight == 1 else self.xl_weight * xl_term)
        return pre * self.lr_scale if self.lr_scale != 1 else pre

    def forward(self, pe_abs: Tensor, pe_xl: Tensor) -> Tensor:
        """``pe_abs``, ``pe_xl``: ``(B, T, C)`` sinusoids of each token's two positions."""
        return torch.tanh(self.pre_activation(pe_abs, pe_xl))


# |PE_abs U + PE_XL V| above this counts as saturated: tanh' < 0.071, so the unit passes
# under 7% of its gradient and barely moves with U and V
SATURATION = 2.0


def input_statistics(pre_activation: Tensor, embedding: Tensor, padding_mask: Tensor) -> Tensor:
    """Sums over a batch's real tokens of what tells whether InXL's input learns (logged by the
    criterion as ``xlpe_in_norm``, ``xlpe_embed_norm`` and ``xlpe_saturated``):
    ``[Σ|PE_IN|, Σ|X|, saturated units, tokens, units]``, ``X`` the scaled word embedding."""
    with torch.no_grad():
        keep = (~padding_mask).unsqueeze(-1).float()
        pre = pre_activation.float() * keep
        tokens = keep.sum()
        return torch.stack([
            torch.tanh(pre).norm(dim=-1).sum(),
            (embedding.float() * keep).norm(dim=-1).sum(),
            (pre.abs() > SATURATION).float().sum(),
            tokens,
            tokens * pre.size(-1),
        ])
