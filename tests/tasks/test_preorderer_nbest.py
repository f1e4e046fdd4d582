"""--preorderer-nbest: decode each of the preorderer's N best reorderings, keep the best choice."""
import pytest
import torch

from synthetic_corpus import preprocess_corpus, random_preorderer, write_corpus, xlpe_task
from xlpe_fairseq.plugin_errors import OptionError
from xlpe_fairseq.preordering.preorderer import Preorderer


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A binarized corpus without test positions and a preorderer that reorders a lot."""
    root = tmp_path_factory.mktemp("nbest")
    raw = write_corpus(root / "raw", sizes={"train": 30, "valid": 5, "test": 40})
    preprocess_corpus(raw, root / "data-bin")
    random_preorderer(raw, 0).save(root / "preorderer.pt")
    return root / "data-bin", root / "preorderer.pt"


def displacement(positions):
    """A stand-in translation score that prefers reorderings near the source order."""
    return -0.1 * sum(abs(p - i) for i, p in enumerate(positions))


class PositionScoringGenerator:
    """Stands in for fairseq's SequenceGenerator: one hypothesis a sentence, whose beam score is
    ``displacement`` of the positions it was given and whose tokens say which they were."""

    beam_size = 1

    def generate(self, models, sample, **kwargs):
        pad = 1
        beams = []
        for tokens, positions in zip(sample["net_input"]["src_tokens"],
                                     sample["net_input"]["reorder_positions"]):
            kept = positions[tokens.ne(pad)].tolist()[:-1]  # EOS's position left out
            beams.append([{"tokens": torch.tensor(kept), "score": displacement(kept)}])
        return beams


def test_each_sentence_keeps_the_reordering_of_the_best_choice_score(prepared):
    data_bin, preorderer_path = prepared
    preorderer = Preorderer.load(str(preorderer_path))
    for weight in ("0", "0.1", "1000000"):  # the model alone, the default, the search alone
        task, model, _ = xlpe_task(data_bin, "--preorderer", str(preorderer_path),
                                     "--preorderer-nbest", "4", "--preorderer-nbest-weight", weight)
        task.load_dataset("test")
        dataset = task.datasets["test"]
        sample = dataset.collater([dataset[i] for i in range(len(dataset))])
        chosen = task.inference_step(PositionScoringGenerator(), [model], sample)
        special = (task.src_dict.pad(), task.src_dict.eos())
        sentences = [[task.src_dict[i] for i in row.tolist() if i not in special]
                     for row in sample["net_input"]["src_tokens"]]
        changed = 0
        for row, (sentence, beam) in enumerate(zip(sentences, chosen)):
            candidates = preorderer.predict_kbest([sentence], 4)[0]
            expected = max(candidates, key=lambda c: displacement(c[1]) + float(weight) * c[0])[1]
            assert beam[0]["tokens"].tolist() == expected, \
                f"weight {weight}, batch row {row}: kept {beam[0]['tokens'].tolist()}, the " \
                f"best choice score is {expected}"
            changed += expected != candidates[0][1]
        if weight == "1000000":
            assert changed == 0, "a dominant search score must keep the preorderer's best"
        else:
            assert changed >= 3, f"weight {weight}: the test needs sentences whose choice moves"


def test_nbest_needs_a_preorderer_a_positive_count_and_a_finite_weight(prepared):
    data_bin, preorderer_path = prepared
    with pytest.raises(OptionError, match="--preorderer-nbest chooses .*pass --preorderer"):
        xlpe_task(data_bin, "--preorderer-nbest", "3")
    with pytest.raises(OptionError, match="--preorderer-nbest must be a whole number from 1 to 9223372036854775807, got 0"):
        xlpe_task(data_bin, "--preorderer", str(preorderer_path), "--preorderer-nbest", "0")
    with pytest.raises(OptionError, match="--preorderer-nbest-weight must be a finite number"):
        xlpe_task(data_bin, "--preorderer", str(preorderer_path), "--preorderer-nbest", "2",
                       "--preorderer-nbest-weight", "nan")


def test_scoring_a_reference_refuses_to_choose(prepared):
    data_bin, preorderer_path = prepared
    task, model, _ = xlpe_task(data_bin, "--preorderer", str(preorderer_path),
                                 "--preorderer-nbest", "2")
    task.load_dataset("test")
    dataset = task.datasets["test"]
    sample = dataset.collater([dataset[0]])

    class ReferenceScorer:  # fairseq's SequenceScorer has no beam
        def generate(self, models, sample, **kwargs):
            return []

    with pytest.raises(OptionError, match="--score-reference scores one given translation"):
        task.inference_step(ReferenceScorer(), [model], sample)
