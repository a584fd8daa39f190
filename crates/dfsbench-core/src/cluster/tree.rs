//! The shape of the end-of-phase merge: a k-ary tree over the ranks, numbered as a heap (rank
//! `r`'s children are `k·r + 1 ..= k·r + k`). Each rank merges its children's parts into its
//! own and sends one part to its parent, so rank 0 merges `k` parts instead of `N - 1`
//! (docs/scaling.md).

/// Children per rank. Rank 0 merges at most this many parts; the tree is
/// `ceil(log_k N)` levels deep, each level one merge after another (docs/scaling.md measures
/// 8 against the flat merge).
pub(crate) const FANOUT: usize = 8;

/// The tree of `size` ranks with `fanout` children per rank.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tree {
    pub size: usize,
    pub fanout: usize,
}

impl Tree {
    /// The rank `rank` sends its merged part to; none for rank 0.
    pub(crate) fn parent(&self, rank: usize) -> Option<usize> {
        (rank > 0).then(|| (rank - 1) / self.fanout)
    }

    /// The ranks that send their merged parts to `rank`.
    pub(crate) fn children(&self, rank: usize) -> std::ops::Range<usize> {
        let first = rank.saturating_mul(self.fanout).saturating_add(1).min(self.size);
        let end = first.saturating_add(self.fanout).min(self.size);
        first..end
    }

    /// Links between `rank` and its parent to get there from rank 0.
    pub(crate) fn depth(&self, rank: usize) -> usize {
        let mut d = 0;
        let mut r = rank;
        while let Some(p) = self.parent(r) {
            r = p;
            d += 1;
        }
        d
    }

    /// True when `rank` is `ancestor` or below it.
    pub(crate) fn is_below(&self, rank: usize, ancestor: usize) -> bool {
        let mut r = rank;
        loop {
            if r == ancestor {
                return true;
            }
            match self.parent(r) {
                Some(p) => r = p,
                None => return false,
            }
        }
    }

    /// The depth of the deepest rank.
    pub(crate) fn height(&self) -> usize {
        self.depth(self.size.saturating_sub(1))
    }

    /// `rank` and every rank below it, in rank order: whose parts are lost with it.
    pub(crate) fn subtree(&self, rank: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut level = rank..rank + 1;
        while level.start < self.size {
            out.extend(level.start..level.end.min(self.size));
            let first = self.children(level.start).start;
            let last = self.children(level.end - 1).end;
            if first >= last {
                break;
            }
            level = first..last;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_but_0_has_one_parent_and_is_its_child() {
        for size in [1, 2, 3, 8, 9, 10, 73, 256, 1000] {
            for fanout in [2, 3, 8, 16] {
                let t = Tree { size, fanout };
                let mut seen = vec![0; size];
                for r in 0..size {
                    for c in t.children(r) {
                        assert_eq!(t.parent(c), Some(r), "size {size} k {fanout}");
                        seen[c] += 1;
                    }
                    assert!(t.children(r).len() <= fanout);
                }
                assert_eq!(t.parent(0), None);
                assert_eq!(seen[0], 0);
                assert!(seen[1..].iter().all(|&n| n == 1), "size {size} k {fanout}");
            }
        }
    }

    #[test]
    fn the_tree_is_log_k_deep() {
        let t = |size| Tree { size, fanout: 8 };
        assert_eq!(t(1).height(), 0);
        assert_eq!(t(9).height(), 1);
        assert_eq!(t(10).height(), 2);
        assert_eq!(t(73).height(), 2);
        assert_eq!(t(74).height(), 3);
        assert_eq!(t(10_000).height(), 5);
        assert_eq!(
            Tree {
                size: 10_000,
                fanout: 2
            }
            .height(),
            13
        );
    }

    #[test]
    fn a_subtree_is_its_rank_and_everything_below_it() {
        for size in [1, 5, 10, 100, 300] {
            for fanout in [2, 8] {
                let t = Tree { size, fanout };
                assert_eq!(t.subtree(0), (0..size).collect::<Vec<_>>());
                for r in 0..size {
                    let below: Vec<usize> = (0..size).filter(|&x| t.is_below(x, r)).collect();
                    assert_eq!(t.subtree(r), below, "rank {r} of {size}, k {fanout}");
                }
            }
        }
    }
}
