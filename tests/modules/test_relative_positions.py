"""Relative position schemes against their papers' equations, and the attention that applies
them against fairseq's."""
import pytest
import torch
from fairseq.modules import MultiheadAttention

from xlpe_fairseq.modules import (
    ALiBiPositions,
    PositionalSelfAttention,
    RelativePositionScheme,
    RotaryPositions,
    ShawRelativePositions,
    T5RelativeBias,
    relative_distances,
)
from xlpe_fairseq.modules.relative_positions import alibi_slopes, t5_buckets


def test_relative_distances_put_queries_at_the_last_key_positions():
    assert relative_distances(2, 4).tolist() == [[-2, -1, 0, 1], [-3, -2, -1, 0]]


def test_shaw_scores_and_values_follow_eq_3_to_6():
    torch.manual_seed(0)
    k = 2
    scheme = ShawRelativePositions(head_dim=4, max_relative_positions=k, values=True)
    q, probs = torch.randn(2, 3, 5, 4), torch.rand(2, 3, 5, 5)
    a_k, a_v = scheme.relative_keys.weight, scheme.relative_values.weight
    expected_bias = torch.empty(2, 3, 5, 5)
    expected_values = torch.zeros(2, 3, 5, 4)
    for i in range(5):
        for j in range(5):
            row = max(-k, min(k, j - i)) + k
            expected_bias[:, :, i, j] = q[:, :, i] @ a_k[row]
            expected_values[:, :, i] += probs[:, :, i, j, None] * a_v[row]
    torch.testing.assert_close(scheme.score_bias(q, 5), expected_bias)
    torch.testing.assert_close(scheme.value_term(probs), expected_values)


def test_shaw_without_values_has_no_value_table():
    scheme = ShawRelativePositions(head_dim=4, max_relative_positions=3, values=False)
    assert scheme.relative_values is None and scheme.value_term(torch.rand(1, 1, 2, 2)) is None
    with pytest.raises(ValueError, match="--max-relative-positions"):
        ShawRelativePositions(head_dim=4, max_relative_positions=0, values=False)


def test_rotary_scores_depend_on_the_distance_only():
    torch.manual_seed(0)
    rotary = RotaryPositions(head_dim=8)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)
    scores = {}
    for i, j in [(0, 3), (5, 8), (2, 2), (7, 7)]:
        q_i, _ = rotary.rotate(q, q, i)
        _, k_j = rotary.rotate(k, k, j)
        scores[(i, j)] = (q_i * k_j).sum()
    torch.testing.assert_close(scores[(0, 3)], scores[(5, 8)])
    torch.testing.assert_close(scores[(2, 2)], (q * k).sum())
    torch.testing.assert_close(scores[(7, 7)], (q * k).sum())
    assert not torch.allclose(scores[(0, 3)], scores[(2, 2)])
    with pytest.raises(ValueError, match="even head dimension"):
        RotaryPositions(head_dim=5)


def test_alibi_slopes_and_bias_follow_press_et_al():
    assert alibi_slopes(8).tolist() == [2 ** -h for h in range(1, 9)]
    # 6 heads, as the authors' code: the 4-head slopes, then every other 8-head slope
    assert alibi_slopes(6).tolist() == [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3]
    bias = ALiBiPositions(2).score_bias(torch.zeros(1, 2, 1, 4), 4)
    # slopes 2^-4 and 2^-8; the query is the last of 4 positions
    assert bias.tolist() == [[[-3 / 16, -2 / 16, -1 / 16, 0.0]],
                             [[-3 / 256, -2 / 256, -1 / 256, 0.0]]]


def test_t5_buckets_are_exact_near_and_log_spaced_far():
    distances = torch.tensor([0, 1, 7, 8, 20, 127, 128, 1000])
    causal = t5_buckets(-distances, bidirectional=False, num_buckets=32, max_distance=128)
    assert causal.tolist()[:3] == [0, 1, 7]
    assert causal.tolist()[-2:] == [31, 31] and causal.tolist() == sorted(causal.tolist())
    both = t5_buckets(torch.tensor([-3, 0, 3]), bidirectional=True, num_buckets=32,
                      max_distance=128)
    assert both.tolist() == [3, 0, 19], "keys after the query take the upper half"
    assert t5_buckets(torch.tensor([5]), bidirectional=False, num_buckets=32,
                      max_distance=128).tolist() == [0], "a causal bucket ignores the future"
    bias = T5RelativeBias(num_heads=3, bidirectional=True).score_bias(torch.zeros(1, 3, 2, 4), 4)
    assert bias.shape == (3, 2, 4)


def test_without_a_scheme_positional_attention_is_fairseqs():
    """Same parameters, same outputs, same incremental cache as ``MultiheadAttention``."""
    torch.manual_seed(0)
    fairseq_attn = MultiheadAttention(8, 2, self_attention=True).eval()
    attn = PositionalSelfAttention(8, 2, self_attention=True,
                                   relative_positions=RelativePositionScheme()).eval()
    attn.load_state_dict(fairseq_attn.state_dict(), strict=True)
    x = torch.randn(4, 3, 8)
    padding = torch.tensor([[True, False, False, False]] * 3)
    expected, expected_weights = fairseq_attn(x, x, x, key_padding_mask=padding)
    actual, weights = attn(x, x, x, key_padding_mask=padding)
    torch.testing.assert_close(actual, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-5)
    fused, no_weights = attn(x, x, x, key_padding_mask=padding, need_weights=False)
    assert no_weights is None
    torch.testing.assert_close(fused, expected, atol=1e-6, rtol=1e-5,
                               msg="torch's fused kernel must give the explicit scores' result")
    cache, expected_cache = {}, {}
    for t in range(4):
        step, _ = attn(x[t:t + 1], None, None, incremental_state=cache)
        expected_step, _ = fairseq_attn(x[t:t + 1], None, None, incremental_state=expected_cache)
        torch.testing.assert_close(step, expected_step, atol=1e-6, rtol=1e-5)
