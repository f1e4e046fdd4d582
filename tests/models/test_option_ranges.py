"""The plugin's numeric fairseq options are checked when the model, task or criterion is
built: a value out of range is an OptionError of one line naming the flag (exit 2 in
fairseq's commands), not a StopIteration or a model that silently drops a part."""
import pytest

from xlpe_fairseq.io import OptionError

from models.model_builders import build_model, make_task

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("architecture, option, value", [
    ("transformer_rope_iwslt_de_en", "rotary_base", 0.0),
    ("transformer_rope_iwslt_de_en", "rotary_base", -5.0),
    ("transformer_rope_iwslt_de_en", "rotary_base", NAN),
    ("transformer_rope_iwslt_de_en", "rotary_base", INF),
    ("transformer_relpe_iwslt_de_en", "max_relative_positions", 0),
    ("transformer_relpe_iwslt_de_en", "max_relative_positions", 10 ** 9),
    ("transformer_t5_bias_iwslt_de_en", "relative_attention_num_buckets", 1),
    ("transformer_t5_bias_iwslt_de_en", "relative_attention_max_distance", 0),
    ("transformer_dpe_iwslt_de_en", "dpe_layers", -5),
    ("transformer_dpe_iwslt_de_en", "dpe_layers", 0),
])
def test_a_model_option_out_of_range_is_refused_at_build_time(architecture, option, value):
    flag = "--" + option.replace("_", "-")
    with pytest.raises(OptionError, match=f"^{flag} must be "):
        build_model(architecture, **{option: value})


def test_the_criterion_refuses_a_nan_order_lambda():
    from xlpe_fairseq.criterions.label_smoothed_cross_entropy_with_order import (
        LabelSmoothedCrossEntropyWithOrderCriterion,
    )

    with pytest.raises(OptionError, match="^--order-lambda must be a finite number"):
        LabelSmoothedCrossEntropyWithOrderCriterion(make_task(), False, 0.1, NAN)
