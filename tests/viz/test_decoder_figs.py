"""The head-group diagram of ftip-000V joins each query head to the key/value head it reads, and
refuses head counts that do not group."""
import pytest

from ftipbook.viz import decoder_figs
from tests.viz.figure_checks import ax_texts


def test_head_groups_join_each_query_head_to_its_group():
    ax = decoder_figs.draw_head_groups(8, 2)
    assert ax_texts(ax) == [f"q{h}" for h in range(1, 9)] + ["kv1", "kv2"]
    kv_x = {1.5: 1, 5.5: 2}  # centres of the two key/value boxes
    reads = [kv_x[line.get_xdata()[1]] for line in ax.lines]
    assert reads == [1, 1, 1, 1, 2, 2, 2, 2]  # query head h reads group (h - 1) // 4 + 1
    mqa = decoder_figs.draw_head_groups(4, 1)
    assert {line.get_xdata()[1] for line in mqa.lines} == {1.5}


@pytest.mark.parametrize("heads, kv, match", [(8, 3, "must divide"), (8, 0, "positive int"),
                                              (True, 1, "positive int"), (8, 2.0, "positive int")])
def test_head_groups_refuse_counts_that_do_not_group(heads, kv, match):
    with pytest.raises(ValueError, match=match):
        decoder_figs.draw_head_groups(heads, kv)
