"""Every model of the plugin on a CUDA device: the same outputs as on the CPU, fp16 training
steps with finite gradients, and incremental decoding equal to full-sequence scoring.

Skipped where no GPU is present (CI); run on a GPU machine with ``pytest tests/models/test_gpu.py``.
"""
import pytest
import torch
import torch.nn.functional as F
from fairseq.sequence_generator import SequenceGenerator
from fairseq.utils import move_to_cuda

from models.model_builders import build_model, make_batch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SOURCES = ["w1 w2 w3 w4 w5", "w6 w7", "w8 w9 w10 w11"]
TARGETS = ["w5 w4 w3", "w7 w6 w1 w2", "w9 w8"]
REORDER = [[4, 0, 3, 1, 2], [1, 0], [3, 2, 0, 1]]

# (architecture, overrides, role of the reorder positions)
MODELS = {
    "transformer": ("transformer_iwslt_de_en", {}, None),
    "dpe": ("transformer_dpe_iwslt_de_en", {}, "target"),
    "xlpe-inxl": ("transformer_xlpe_iwslt_de_en", dict(xlpe_mode="inxl", xlpe_heads=0), "input"),
    "xlpe-headxl": ("transformer_xlpe_iwslt_de_en", dict(xlpe_mode="headxl", xlpe_heads=2),
                    "input"),
    "xlpe-combination": ("transformer_xlpe_iwslt_de_en",
                         dict(xlpe_mode="combination", xlpe_heads=2), "input"),
    "re-encoder": ("transformer_reorder_emb_iwslt_de_en", dict(reorder_emb="encoder"), None),
    "re-decoder": ("transformer_reorder_emb_iwslt_de_en", dict(reorder_emb="decoder"), None),
    "re-both": ("transformer_reorder_emb_iwslt_de_en", dict(reorder_emb="both"), None),
    "encoder-free-inxl": ("transformer_xlpe_encoder_free_iwslt_de_en", {}, "input"),
    "relpe": ("transformer_relpe_iwslt_de_en", {}, None),
    "rope": ("transformer_rope_iwslt_de_en", {}, None),
    "alibi": ("transformer_alibi_iwslt_de_en", {}, None),
    "t5-bias": ("transformer_t5_bias_iwslt_de_en", {}, None),
}


def build(name):
    arch, overrides, role = MODELS[name]
    model, task = build_model(arch, **overrides)
    batch = make_batch(task.source_dictionary, SOURCES, TARGETS, REORDER if role else None,
                       positions_as_input=role == "input")
    return model, task, batch


@pytest.mark.parametrize("name", MODELS)
def test_gpu_output_equals_cpu_output(name):
    model, _, batch = build(name)
    with torch.no_grad():
        on_cpu, _ = model(**batch["net_input"])
        on_gpu, _ = model.cuda()(**move_to_cuda(batch["net_input"]))
    torch.testing.assert_close(on_gpu.cpu(), on_cpu, atol=1e-4, rtol=1e-4,
                               msg=f"{name}: the GPU computes something else than the CPU")


@pytest.mark.parametrize("name", MODELS)
def test_fp16_training_step_has_finite_loss_and_gradients(name):
    model, task, batch = build(name)
    model = model.cuda().half().train()
    batch = move_to_cuda(batch)
    logits, extra = model(**batch["net_input"])
    loss = F.cross_entropy(logits.float().flatten(0, 1), batch["target"].flatten(),
                           ignore_index=task.target_dictionary.pad())
    if extra.get("order_predictions") is not None:
        loss = loss + extra["order_predictions"].float().pow(2).mean()
    loss.backward()
    assert torch.isfinite(loss), f"{name}: fp16 loss is {loss.item()}"
    for param_name, param in model.named_parameters():
        if param.grad is not None:
            assert torch.isfinite(param.grad).all(), f"{name}: non-finite fp16 gradient in {param_name}"


@pytest.mark.parametrize("name", ["transformer", "dpe", "xlpe-combination", "re-decoder", "re-both",
                                  "relpe", "rope", "alibi", "t5-bias"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_gpu_beam_search_scores_equal_forced_decoding(name, dtype):
    model, task, batch = build(name)
    model = model.cuda().to(dtype)
    batch = move_to_cuda(batch)
    dictionary = task.target_dictionary
    generator = SequenceGenerator([model], dictionary, beam_size=3, max_len_b=6)
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    with torch.no_grad():
        hypotheses = generator.forward(batch)
        net_input = batch["net_input"]
        for row, beam in enumerate(hypotheses):
            for hypo in beam:
                tokens = hypo["tokens"]
                prev = torch.cat([tokens.new_tensor([dictionary.eos()]), tokens[:-1]])[None]
                forced_input = {k: v[row : row + 1] for k, v in net_input.items()
                                if k != "prev_output_tokens"}
                net_output = model(**forced_input, prev_output_tokens=prev)
                log_probs = model.get_normalized_probs(net_output, log_probs=True)[0]
                expected = log_probs.gather(-1, tokens[:, None])[:, 0].float()
                torch.testing.assert_close(
                    hypo["positional_scores"].float(), expected, atol=tolerance, rtol=tolerance,
                    msg=f"{name} {dtype}: incremental decoding differs from full-sequence scoring")
