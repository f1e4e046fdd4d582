"""The models the commands train, one entry each, and the sizes they train at.

A model's name means the same to every command that takes one: ``xlpe-train`` and its
``--sbatch`` script (the fairseq-train flags), ``xlpe-evaluate`` (the data-bin, and what a
checkpoint of the model was saved with), ``xlpe-prepare --models`` (whether the preorderer is
needed), ``xlpe-study`` (its profiles' flags) and ``examples/demo.sh``. docs/models.md's
table of models is written from here (scripts/model_table.py; a test compares).

A model's fairseq-train flags at a size are the size's Transformer dimensions (``dims``), then
``--arch`` (the model's architecture, with the size's preset suffix where the architecture has
presets), then the model's options. An option's value is either literal or ``{parameter}``,
the size's value of that parameter; an option whose parameter the size leaves unset is left
out, so that the preset's own default holds. A model whose flags follow no such rule spells
them out for each size it is offered at (``flags_at``).

This module sits below the commands and the study, which both read it, and imports nothing.
"""
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Size:
    """A model size: its Transformer dimensions, the suffix of fairseq's architecture presets
    at that size, the values of the models' size-dependent options, and the schedule every
    model takes at it (``None``: the schedule of the model's paper)."""
    name: str
    description: str
    preset: str = ""
    dims: tuple = ()
    values: dict = field(default_factory=dict)
    schedule: str = None


@dataclass(frozen=True)
class Model:
    """One model of the registry (the module docstring says how its flags are built)."""
    name: str
    description: str
    arch: str = "transformer"
    options: tuple = ()
    # the options (of ``options``) that tell a checkpoint of this model from another's
    identity: tuple = ()
    # the data-bin variant it reads: text, dpe (order targets) or xlpe (positions everywhere)
    variant: str = "text"
    # the schedule of its paper at the base and big sizes
    schedule: str = "dpe"
    big_schedule: str = None
    # a Transformer, which takes the size's dims and preset suffix (fairseq's lstm takes
    # neither)
    sized: bool = True
    flags_at: dict = None
    # the model this name is another name of (its flags and checkpoints are that model's)
    alias_of: str = None


# The DPE paper's IWSLT'14 size for every model (§4.2: dim 256, FFN 1024, 2+2 layers,
# 2 heads), so that all models compare at one size.
SMALL_DIMS = (
    "--encoder-embed-dim", "256", "--encoder-ffn-embed-dim", "1024", "--encoder-layers", "2",
    "--encoder-attention-heads", "2", "--decoder-embed-dim", "256", "--decoder-ffn-embed-dim",
    "1024", "--decoder-layers", "2", "--decoder-attention-heads", "2",
)
# Half the width of the small size: twice as fast on 2 CPU cores, which buys the demo twice
# the updates. 4 heads, so that XL PE's tau = 1 is the paper's best share of heads (4 of 16,
# Ding et al. 2020, Fig. 3).
DEMO_DIMS = (
    "--encoder-embed-dim", "128", "--encoder-ffn-embed-dim", "512", "--encoder-layers", "2",
    "--encoder-attention-heads", "4", "--decoder-embed-dim", "128", "--decoder-ffn-embed-dim",
    "512", "--decoder-layers", "2", "--decoder-attention-heads", "4",
)

# The size-dependent values: order_lambda, DPE's order-loss weight (the paper's 0.3 on IWSLT'14,
# §4.5, and 0.5 on WMT'14, §4.4; other data take their size's); xlpe_heads, XL PE's tau (4 of 16
# heads in the paper, §4, Fig. 3; 1 of 2 or 4 at the small sizes) and inxl_heads, the same
# flag for InXL, which has no XL heads and which xlpe-train has always given it at the small
# size (the study never did, and its runs' recorded options stay as they were); deeper_layers,
# transformer-deep's encoder depth (DPE's 2 layers more); lstm_*, the LSTM's width and depth.
SIZES = {size.name: size for size in (
    Size("small", "256/1024, 2+2 layers, 2 heads: the DPE paper's IWSLT'14 setup, for up to a "
         "few hundred thousand pairs", dims=SMALL_DIMS, schedule="dpe-iwslt",
         values={"order_lambda": "0.3", "xlpe_heads": "1", "inxl_heads": "1",
                 "deeper_layers": "4", "lstm_embed": "256", "lstm_units": "256",
                 "lstm_layers": "2"}),
    Size("base", "Transformer base (512/2048, 6+6 layers, 8 heads), for millions of pairs",
         preset="_wmt_en_de", values={"order_lambda": "0.5", "deeper_layers": "8"}),
    Size("big", "Transformer big (1024/4096, 6+6 layers, 16 heads)", preset="_wmt_en_de_big",
         values={"order_lambda": "0.5", "deeper_layers": "8"}),
    Size("demo", "128/512, 2+2 layers, 4 heads: the README's demo, minutes on a CPU",
         dims=DEMO_DIMS, schedule="demo",
         values={"order_lambda": "0.5", "xlpe_heads": "1", "inxl_heads": "1",
                 "deeper_layers": "4", "lstm_embed": "128", "lstm_units": "128",
                 "lstm_layers": "2"}),
    # xlpe-study's profiles: their dimensions are among the profile's settings
    Size("cpu-demo", "xlpe-study's cpu-demo profile (the demo's dimensions)",
         values={"order_lambda": "0.5", "xlpe_heads": "1", "deeper_layers": "4",
                 "lstm_units": "128"}),
    Size("gpu-iwslt", "xlpe-study's gpu-iwslt profile (512/1024, 6+6 layers, 4 heads)",
         values={"order_lambda": "0.3", "xlpe_heads": "1", "deeper_layers": "8",
                 "lstm_units": "512"}),
)}
TRAIN_SIZES = ("small", "base", "big", "demo")
STUDY_SIZES = ("cpu-demo", "gpu-iwslt")


def _deeper(layers, base_arch):
    """DPE Table 5's deeper encoders: ``layers`` encoder layers at base (its preset), as many
    more than the size's own elsewhere."""
    more = layers - 6
    return {"small": ("--arch", "transformer", "--encoder-layers", str(2 + more)),
            "base": ("--arch", base_arch),
            "big": ("--arch", "transformer_wmt_en_de_big", "--encoder-layers", str(layers)),
            "demo": ("--arch", "transformer", "--encoder-layers", str(2 + more))}


def _xlpe(mode, heads, description):
    return Model(f"xlpe-{mode}", description, arch="transformer_xlpe",
                 options=(("--xlpe-mode", mode), ("--xlpe-heads", heads)),
                 identity=("--xlpe-mode",), variant="xlpe", schedule="xlpe")


_COMBINATION = _xlpe("combination", "{xlpe_heads}",
                     "XL PE (Ding et al. 2020): InXL and HeadXL combined, the paper's best")
_POSITION_BASELINE = {"schedule": "dpe", "big_schedule": "xlpe"}

# xlpe-train's models, in the order its usage lists them
MODELS = {model.name: model for model in (
    Model("transformer", "fairseq's Transformer, every paper's baseline", **_POSITION_BASELINE),
    # --order-lambda is the weight of the order loss, (1 - lambda) CE + lambda L_order, as the
    # DPE paper's text and the authors' code have it; its Eq. 2 prints the weights the other
    # way round
    Model("dpe", "DPE (Zheng et al. 2021): two layers predict target-order positions, "
          "supervised by an order loss", arch="transformer_dpe",
          options=(("--order-lambda", "{order_lambda}"),), variant="dpe"),
    replace(_COMBINATION, name="xlpe", description="xlpe-combination's other name",
            alias_of="xlpe-combination"),
    _COMBINATION,
    _xlpe("inxl", "{inxl_heads}",
          "XL PE's InXL: the input position mixes the source and target-order sinusoids"),
    _xlpe("headxl", "{xlpe_heads}",
          "XL PE's HeadXL: tau heads of the first layer read target-order positions"),
    *(Model(f"re-{stack}", f"Reordering Embeddings (Chen et al. 2019) in the {where}",
            arch="transformer_reorder_emb", options=(("--reorder-emb", stack),),
            identity=("--reorder-emb",), schedule="re")
      for stack, where in (("encoder", "encoder"), ("decoder", "decoder"),
                           ("both", "encoder and the decoder"))),
    Model("transformer-8e", "DPE Table 5's 8E: 2 encoder layers more than the size's",
          flags_at=_deeper(8, "transformer_8e_wmt_en_de")),
    Model("transformer-10e", "DPE Table 5's 10E: 4 encoder layers more than the size's",
          flags_at=_deeper(10, "transformer_10e_wmt_en_de")),
    Model("transformer-deep", "2 encoder layers more than the size's, as many as DPE adds "
          "(xlpe-study's and the demo's name; transformer-4e in the demo)",
          options=(("--encoder-layers", "{deeper_layers}"),)),
    # XL PE Table 4's encoder-free rows: no encoder layers, the embeddings with their
    # positions (absolute, InXL, none, or none and Shaw's in the decoder) to the decoder; the
    # decoder keeps its absolute PE
    Model("encoder-free", "XL PE Table 4: no encoder layers, absolute PE",
          options=(("--encoder-layers", "0"),), identity=("--encoder-layers",), schedule="xlpe"),
    Model("encoder-free-inxl", "XL PE Table 4: no encoder layers, InXL PE",
          arch="transformer_xlpe", options=(("--xlpe-mode", "inxl"), ("--encoder-layers", "0")),
          identity=("--xlpe-mode", "--encoder-layers"), variant="xlpe", schedule="xlpe"),
    *(Model(f"encoder-free-{kind}", f"XL PE Table 4: no encoder layers, {what}",
            arch="transformer_relpe",
            options=(("--encoder-layers", "0"), ("--relative-positions-in", relative),
                     ("--absolute-positions", "decoder")),
            identity=("--encoder-layers", "--relative-positions-in", "--absolute-positions"),
            schedule="xlpe")
      for kind, relative, what in (
          ("nopos", "none", "no source positions (noEnc-noPos)"),
          ("relpe", "decoder", "Shaw's relative PE in the decoder (+ Relative PE)"))),
    # fairseq's lstm has no FFN or head options: the width and depth of the small sizes
    Model("lstm", "XL PE Table 4's LSTM (6 layers of 1024; the small sizes' width and depth "
          "there)", arch="lstm_6l_wmt_en_de", sized=False, schedule="xlpe",
          options=tuple((f"--{side}-{name}", f"{{lstm_{value}}}")
                        for side in ("encoder", "decoder")
                        for name, value in (("embed-dim", "embed"), ("hidden-size", "units"),
                                            ("layers", "layers")))
          + (("--decoder-out-embed-dim", "{lstm_units}"),)),
    Model("relpe", "Shaw et al. (2018): relative positions, no absolute PE",
          arch="transformer_relpe", **_POSITION_BASELINE),
    Model("rope", "rotary positions (RoPE)", arch="transformer_rope", **_POSITION_BASELINE),
    Model("alibi", "ALiBi's linear attention bias", arch="transformer_alibi",
          **_POSITION_BASELINE),
    Model("t5-bias", "T5's bucketed relative attention bias", arch="transformer_t5_bias",
          **_POSITION_BASELINE),
)}
TRAIN_MODELS = tuple(MODELS)
# xlpe-study's models (and the demo's), in the order its help lists them
STUDY_MODELS = ("transformer", "dpe", "re-encoder", "re-decoder", "re-both", "xlpe-inxl",
                "xlpe-headxl", "xlpe-combination", "transformer-deep", "encoder-free",
                "encoder-free-inxl", "encoder-free-nopos", "encoder-free-relpe", "relpe", "rope",
                "alibi", "t5-bias", "lstm")
# other names the demo takes
ALIASES = {"transformer-4e": "transformer-deep"}


def _arch(model, size):
    return model.arch + (size.preset if model.sized else "")


def flags(name, size):
    """The fairseq-train flags of model ``name`` at size ``size`` (a name of SIZES): the
    size's dims, the architecture and the model's options; None for an unknown model or a
    size it is not offered at."""
    model, size = MODELS.get(name), SIZES[size]
    if model is None:
        return None
    dims = list(size.dims) if model.sized else []
    if model.flags_at is not None:
        own = model.flags_at.get(size.name)
        # the size first, so that a model's own layer count wins
        return None if own is None else dims + list(own)
    words = ["--arch", _arch(model, size)]
    for flag, value in model.options:
        if value.startswith("{"):
            value = size.values.get(value[1:-1])
            if value is None:
                continue
        words += [flag, value]
    return dims + words


def variant(name):
    """The variant of OUT/data-bin model ``name`` reads (text for a name not known)."""
    return MODELS[name].variant if name in MODELS else "text"


def reads_positions(name):
    """Whether the model reads reorder positions in every split (XL PE)."""
    return variant(name) == "xlpe"


def learns_order(name):
    """Whether the model trains on order targets (DPE)."""
    return variant(name) == "dpe"


def default_schedule(name, size):
    """The schedule of the paper a model comes from. The small size is IWSLT-sized data, which
    only the DPE paper trained on: every model takes its IWSLT setup there, and the demo size
    the demo's schedule. The plain transformer and the position baselines compare with every
    paper's baseline: DPE's at base, XL PE's Transformer big at big."""
    model, size = MODELS[name], SIZES[size]
    if size.schedule:
        return size.schedule
    return (model.big_schedule or model.schedule) if size.name == "big" else model.schedule


def checkpoint_settings(name):
    """``{fairseq option: [accepted values]}`` that a checkpoint of model ``name`` (at any of
    xlpe-train's sizes) was saved with: its architecture and the options that make the model
    what it is; ``{}`` for a name not known."""
    model = MODELS.get(name)
    if model is None:
        return {}
    archs = []
    for size in ("small", "base", "big"):
        words = flags(name, size)
        arch = words[words.index("--arch") + 1]
        if arch not in archs:
            archs.append(arch)
    settings = {"arch": archs}
    for flag, value in model.options:
        if flag in model.identity:
            settings[flag[2:].replace("-", "_")] = [value]
    return settings


def _same(stored, value):
    try:
        return float(stored) == float(value)
    except (TypeError, ValueError):
        return str(stored) == value


def models_saved_as(stored):
    """The models (other names left out) whose ``checkpoint_settings`` the values
    ``stored(option)`` of a checkpoint's settings match; of those, the ones that match the most
    settings, as a more particular model (encoder-free) beats a more general one
    (transformer)."""
    def matches(name):
        return all(any(_same(stored(option), value) for value in values)
                   for option, values in checkpoint_settings(name).items())

    found = [name for name, model in MODELS.items() if not model.alias_of and matches(name)]
    most = max((len(checkpoint_settings(name)) for name in found), default=0)
    return [name for name in found if len(checkpoint_settings(name)) == most]
