"""Collation of reorder positions with fairseq's padded source, and the noise attack."""
import pytest
import torch
from fairseq.data import Dictionary, LanguagePairDataset

from xlpe_fairseq.data.reorder_dataset import LanguagePairWithReorderDataset
from xlpe_fairseq.plugin_errors import ReorderFileError


def make_dataset(sentences, reorders, left_pad_source=True, noise=0.0, as_input=True,
                 noise_redraw=False):
    vocab = Dictionary()
    for word in {w for s in sentences for w in s}:
        vocab.add_symbol(word)
    src = [torch.LongTensor([vocab.index(w) for w in s] + [vocab.eos()]) for s in sentences]
    pairs = LanguagePairDataset(
        src, [len(s) for s in src], vocab, tgt=src, tgt_sizes=[len(s) for s in src],
        tgt_dict=vocab, left_pad_source=left_pad_source, shuffle=False,
    )
    reorder = [torch.IntTensor(r) for r in reorders]
    dataset = LanguagePairWithReorderDataset(
        pairs, reorder, "mem/train.reorder.xx-yy", positions_as_input=as_input, noise=noise, seed=3,
        noise_redraw=noise_redraw,
    )
    return dataset, vocab


SENTENCES = [["a", "b", "c"], ["d"], ["e", "f"]]
REORDERS = [[2, 0, 1], [0], [1, 0]]


@pytest.mark.parametrize("left_pad", [True, False])
def test_positions_follow_the_padded_source(left_pad):
    dataset, vocab = make_dataset(SENTENCES, REORDERS, left_pad_source=left_pad)
    batch = dataset.collater([dataset[i] for i in range(3)])
    src_tokens = batch["net_input"]["src_tokens"]
    positions = batch["reorder_positions"]
    assert positions.shape == src_tokens.shape
    assert torch.equal(positions.eq(-1), src_tokens.eq(vocab.pad())), (
        f"padding of positions must mirror the source padding:\n{positions}\n{src_tokens}"
    )
    # fairseq sorts the batch by source length; EOS takes the last position n
    expected = {0: [2, 0, 1, 3], 1: [0, 1], 2: [1, 0, 2]}
    for row, sample_id in enumerate(batch["id"].tolist()):
        got = positions[row][positions[row].ne(-1)].tolist()
        assert got == expected[sample_id], f"sentence {sample_id}: {got} != {expected[sample_id]}"
        eos_column = (src_tokens[row] == vocab.eos()).nonzero().item()
        assert positions[row, eos_column] == len(REORDERS[sample_id])


def test_positions_reach_net_input_only_for_models_that_read_them():
    dataset, _ = make_dataset(SENTENCES, REORDERS, as_input=False)
    batch = dataset.collater([dataset[i] for i in range(3)])
    assert "reorder_positions" not in batch["net_input"]
    assert "reorder_positions" in batch, "the order loss reads positions from the sample"


def test_non_permutation_names_file_and_line():
    dataset, _ = make_dataset(SENTENCES, [[2, 0, 0], [0], [1, 0]])
    with pytest.raises(ReorderFileError, match=r"mem/train.reorder.xx-yy.bin line 1: position 0 occurs twice"):
        dataset[0]


def test_out_of_range_position_is_rejected():
    dataset, _ = make_dataset(SENTENCES, [[2, 0, 1], [0], [2, 0]])
    with pytest.raises(ReorderFileError, match=r"line 3: position 2 \(token 0\) is out of range 0..1"):
        dataset[2]


def test_order_targets_accept_tokens_without_target_and_collate_them_like_padding():
    """-1 from `xlpe-reorder --unaligned skip`: kept in the batch (the order loss masks it),
    EOS still at n, padding still -1."""
    dataset, vocab = make_dataset(SENTENCES, [[1, -1, 0], [-1], [0, 1]], as_input=False)
    batch = dataset.collater([dataset[i] for i in range(3)])
    src_tokens, positions = batch["net_input"]["src_tokens"], batch["reorder_positions"]
    expected = {0: [1, -1, 0, 3], 1: [-1, 1], 2: [0, 1, 2]}
    for row, sample_id in enumerate(batch["id"].tolist()):
        got = positions[row][src_tokens[row].ne(vocab.pad())].tolist()
        assert got == expected[sample_id], f"sentence {sample_id}: {got} != {expected[sample_id]}"
    assert positions[src_tokens.eq(vocab.pad())].eq(-1).all()


def test_order_targets_still_check_the_ranked_tokens():
    dataset, _ = make_dataset(SENTENCES, [[2, -1, 0], [0], [1, 0]], as_input=False)
    with pytest.raises(ReorderFileError, match=r"mem/train.reorder.xx-yy.bin line 1: position 2 "
                                               r"\(token 0\) is out of range 0..1 \(2 tokens have"):
        dataset[0]


def test_positions_read_as_input_refuse_tokens_without_target():
    dataset, _ = make_dataset(SENTENCES, [[2, 0, 1], [0], [-1, 0]], as_input=True)
    dataset[0]
    with pytest.raises(ReorderFileError, match=r"mem/train.reorder.xx-yy.bin line 3: token 0 has no "
                                               r"position \(-1.*--unaligned skip.*needs a full "
                                               r"permutation.*--method btg"):
        dataset[2]


def monotone_sentences(lengths):
    """Sentences of the given lengths, each with the identity as its reorder positions."""
    return [[f"w{i}" for i in range(n)] for n in lengths], [list(range(n)) for n in lengths]


def noisy_positions(dataset):
    return [dataset[i]["reorder_positions"] for i in range(len(dataset))]


def test_noise_swaps_pairs_of_positions_and_keeps_a_permutation():
    dataset, _ = make_dataset(*monotone_sentences([20] * 50), noise=0.2)
    for noisy in noisy_positions(dataset):
        assert sorted(noisy.tolist()) == list(range(20)), f"noise must keep a permutation: {noisy}"
        moved = noisy.ne(torch.arange(20))
        assert int(moved.sum()) == 4, f"20% of 20 tokens are 2 swaps, 4 tokens: {noisy}"
        # on the identity, disjoint swaps (and nothing else, e.g. no 3-cycle) are an involution
        assert torch.equal(noisy[noisy], torch.arange(20)), f"not pairwise swaps: {noisy}"


def test_noise_corrupts_the_expected_share_of_tokens_with_probabilistic_rounding():
    # 5% of 27 tokens is 0.675 swaps: a swap (2 tokens) in 67.5% of the sentences, not 0 swaps
    dataset, _ = make_dataset(*monotone_sentences([27] * 2000), noise=0.05)
    moved = torch.tensor([int(p.ne(torch.arange(27)).sum()) for p in noisy_positions(dataset)])
    assert set(moved.tolist()) == {0, 2}, f"0.675 swaps round to 0 or 1: {moved.unique()}"
    share = moved.sum().item() / (27 * 2000)
    assert abs(share - 0.05) < 0.004, f"{share:.4f} of the tokens corrupted, expected 0.05"
    lengths = [3 + i % 40 for i in range(2000)]
    dataset, _ = make_dataset(*monotone_sentences(lengths), noise=0.13)
    moved = sum(int(p.ne(torch.arange(p.numel())).sum()) for p in noisy_positions(dataset))
    assert abs(moved / sum(lengths) - 0.13) < 0.01, f"{moved / sum(lengths):.4f} corrupted, expected 0.13"


def test_noise_is_drawn_once_per_sentence_and_kept_across_epochs():
    dataset, _ = make_dataset(*monotone_sentences([20] * 30), noise=0.2)
    first = noisy_positions(dataset)
    assert len({tuple(p.tolist()) for p in first}) > 20, "sentences must get different swaps"
    dataset.set_epoch(2)
    assert all(torch.equal(a, b) for a, b in zip(noisy_positions(dataset), first)), (
        "by default a sentence keeps its corruption in every epoch"
    )


def test_noise_redraw_draws_new_swaps_every_epoch():
    dataset, _ = make_dataset(*monotone_sentences([20] * 30), noise=0.2, noise_redraw=True)
    first = noisy_positions(dataset)
    assert all(torch.equal(a, b) for a, b in zip(noisy_positions(dataset), first)), (
        "within an epoch the swaps must be reproducible"
    )
    dataset.set_epoch(2)
    changed = sum(not torch.equal(a, b) for a, b in zip(noisy_positions(dataset), first))
    assert changed > 20, f"with noise_redraw the swaps change with the epoch ({changed} of 30 did)"


def test_no_noise_leaves_positions_untouched():
    dataset, _ = make_dataset(SENTENCES, REORDERS, noise=0.0)
    assert dataset[0]["reorder_positions"].tolist() == REORDERS[0]
