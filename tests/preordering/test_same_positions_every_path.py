"""One preorderer checkpoint (one model or an ensemble) gives one sentence the same positions
on every path.

The paths: the file written by ``xlpe-preorder``; ``--preorderer`` in the task when a split has
no reorder file (``load_dataset`` → ``predict_positions``: fairseq-generate, and through it
xlpe-swap-robustness, and the model loading of xlpe-aer / xlpe-attention-heatmap); and
``inference_step``, where fairseq-interactive's raw input gets its positions.
"""
import pytest
import torch
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from omegaconf import OmegaConf

from synthetic_corpus import preprocess_corpus, random_preorderer, write_corpus, xlpe_task
from xlpe_fairseq.evaluation.attention_alignment import load_model
from xlpe_fairseq.preordering import predict
from xlpe_fairseq.preordering.preorderer import PreordererEnsemble
from xlpe_fairseq.reordering.btg_rules import is_btg_reachable

@pytest.fixture(scope="module", params=["one preorderer", "an ensemble"])
def setup(tmp_path_factory, request):
    """A binarized corpus without test positions and a preorderer checkpoint (one model, or an
    ensemble of two, as xlpe-preorder-ensemble writes) that reorders a lot."""
    root = tmp_path_factory.mktemp("paths")
    raw = write_corpus(root / "raw", sizes={"train": 30, "valid": 5, "test": 40})
    preprocess_corpus(raw, root / "data-bin")
    if request.param == "an ensemble":
        PreordererEnsemble([random_preorderer(raw, 0), random_preorderer(raw, 1)]).save(
            root / "preorderer.pt")
    else:
        random_preorderer(raw, 0).save(root / "preorderer.pt")
    return raw, root / "data-bin", root / "preorderer.pt"


class RecordingGenerator:
    """Stands in for fairseq's SequenceGenerator and keeps the batch it is given."""

    def generate(self, models, sample, **kwargs):
        self.sample = sample
        return []


def test_file_task_and_interactive_paths_agree(setup, tmp_path):
    raw, data_bin, checkpoint = setup
    written = tmp_path / "test.pred.reorder"
    predict.main(["--preorderer", str(checkpoint), "--source", str(raw / "test.xx"),
                  "--output", str(written)])
    from_file = [list(map(int, line.split())) for line in written.read_text().splitlines()]
    assert all(is_btg_reachable(p) for p in from_file)
    assert sum(p != sorted(p) for p in from_file) >= 10, "the test needs non-monotone positions"

    task, model, _ = xlpe_task(data_bin, "--preorderer", str(checkpoint))
    task.load_dataset("test")
    dataset = task.datasets["test"]
    from_dataset = [dataset.reorder[i].tolist() for i in range(len(dataset))]
    assert from_dataset == from_file, "fairseq-generate --preorderer differs from xlpe-preorder"

    # fairseq-interactive: a left-padded batch of raw sentences without positions
    sample = dataset.collater([dataset[i] for i in range(len(dataset))])
    del sample["net_input"]["reorder_positions"]
    generator = RecordingGenerator()
    task.inference_step(generator, [model], sample)
    positions = generator.sample["net_input"]["reorder_positions"]
    src_tokens = sample["net_input"]["src_tokens"]
    for row, index in enumerate(sample["id"].tolist()):
        kept = positions[row][src_tokens[row].ne(task.src_dict.pad())].tolist()
        assert kept[:-1] == from_file[index], f"inference_step differs on test line {index + 1}"


def test_evaluation_tools_load_the_same_positions(setup, tmp_path):
    raw, data_bin, checkpoint = setup
    task, model, args = xlpe_task(data_bin, "--preorderer", str(checkpoint))
    model_path = tmp_path / "checkpoint.pt"
    # the least of a fairseq checkpoint that load_model_ensemble_and_task reads, its settings
    # saved as fairseq saves them (plain containers, which a weights-only load reads)
    cfg = OmegaConf.to_container(convert_namespace_to_omegaconf(args), resolve=True,
                                 enum_to_str=True)
    torch.save({"cfg": cfg, "model": model.state_dict(),
                "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                       "optimizer_name": "Adam", "lr_scheduler_state": {},
                                       "num_updates": 0}],
                "extra_state": {"train_iterator": {"epoch": 1}}}, model_path)
    written = tmp_path / "test.pred.reorder"
    predict.main(["--preorderer", str(checkpoint), "--source", str(raw / "test.xx"),
                  "--output", str(written)])
    from_file = [list(map(int, line.split())) for line in written.read_text().splitlines()]
    _, tool_task = load_model(str(model_path), str(data_bin), str(checkpoint))
    tool_task.load_dataset("test")
    dataset = tool_task.datasets["test"]
    assert [dataset.reorder[i].tolist() for i in range(len(dataset))] == from_file, \
        "xlpe-aer / xlpe-attention-heatmap --preorderer differ from xlpe-preorder"
