//! The seed evaluations (see STUDIES.md) as data: their points at a scale, and their tables.

mod clients_sweep;
mod common;
mod dfsperf;
mod fio_matrix;
pub(super) mod io500;
mod mlperf_storage;
mod size_sweep;
mod surfnet;

use super::model::Study;
use super::scale::Scale;

/// Name and one line of every study, in `dfsbench study list` order.
pub const STUDIES: [(&str, &str); 7] = [
    (
        "size-sweep",
        "write/read N files of size S, 10000 x 0 B to 1 x 10 GB, and metadata ops/s (CS597 report)",
    ),
    (
        "clients-sweep",
        "2..256 closed-loop clients x 0 KB..10 MB files: write/read/delete, client CPU (BTH thesis)",
    ),
    (
        "dfsperf",
        "DFS-Perf: metadata, 80/20 50/50 20/80 read/write mixtures, 1..32 thread scalability, LocalFS baseline",
    ),
    (
        "surfnet",
        "SURFnet: sequential and random I/O with 8K/256K/8M records on a 2 GB file, random seeks/s",
    ),
    (
        "fio-matrix",
        "fio: read/write/randread/randwrite x 4K/128K/1024K blocks x 1/2/4/8 threads, iodepth 32, 180 s",
    ),
    (
        "io500",
        "IO500: ior-easy/hard write/read, mdtest-easy/hard, find, in IO500's order with its rules and score",
    ),
    (
        "mlperf-storage",
        "MLPerf Storage: accelerators kept at AU for unet3d/resnet50/cosmoflow, llama3 checkpoint write/read GB/s",
    ),
];

/// The study `name` at `scale`; `nodes` are the client node counts of the studies with a node
/// axis (size-sweep, dfsperf), empty for this machine only.
pub fn build(name: &str, scale: Scale, nodes: &[usize]) -> Option<Study> {
    Some(match name {
        "size-sweep" => size_sweep::size_sweep(scale, nodes),
        "clients-sweep" => clients_sweep::clients_sweep(scale, nodes),
        "dfsperf" => dfsperf::dfsperf(scale, nodes),
        "surfnet" => surfnet::surfnet(scale),
        "fio-matrix" => fio_matrix::fio_matrix(scale),
        "io500" => io500::io500(scale, nodes),
        "mlperf-storage" => mlperf_storage::mlperf_storage(scale, nodes),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::common::{pub_size, GB, KB};
    use super::*;

    /// clients-sweep with --nodes: each clients row spread evenly over the most nodes that
    /// divide it, one process per node, the same clients in all.
    #[test]
    fn clients_sweep_spreads_its_clients_over_the_nodes() {
        use super::super::model::Spread;
        let scale = Scale::parse("0.001").unwrap();
        let shape = |nodes: &[usize], id: &str| {
            let s = build("clients-sweep", scale, nodes).unwrap();
            let p = s.points.iter().find(|p| p.id == id).unwrap();
            (p.spread, p.jobs[0].settings.workers)
        };
        assert_eq!(shape(&[], "clients8"), (Spread::Threads, Some(8)));
        assert_eq!(
            shape(&[4], "clients2"),
            (Spread::Nodes { nodes: 2, per_node: 1 }, Some(1))
        );
        assert_eq!(
            shape(&[4], "clients8"),
            (Spread::Nodes { nodes: 4, per_node: 1 }, Some(2))
        );
        assert_eq!(
            shape(&[1, 4], "clients256"),
            (Spread::Nodes { nodes: 4, per_node: 1 }, Some(64))
        );
        assert_eq!(
            shape(&[3], "clients8"),
            (Spread::Nodes { nodes: 2, per_node: 1 }, Some(4))
        );
        let s = build("clients-sweep", scale, &[4]).unwrap();
        assert_eq!(
            s.points.iter().find(|p| p.id == "iops").unwrap().spread,
            Spread::Threads
        );
    }

    /// surfnet measures what iozone and bonnie++ did: plain read/write, no engine probe.
    #[test]
    fn surfnet_io_runs_plain_read_and_write() {
        let s = build("surfnet", Scale::parse("0.001").unwrap(), &[]).unwrap();
        let io: Vec<_> = s
            .points
            .iter()
            .flat_map(|p| &p.jobs)
            .filter(|j| j.settings.workload.as_deref() == Some("io"))
            .collect();
        assert_eq!(io.len(), 26, "24 I/O points and the seeks, with and without delay");
        for j in io {
            assert_eq!(
                j.workloads.io.ioengine.as_deref(),
                Some("psync"),
                "{:?}",
                j.settings.name
            );
        }
    }

    /// What the docs say a study runs, they name by point (`point \`seeks-20ms\``, `points
    /// \`*-20ms\``): each such name matches points of the catalog.
    #[test]
    fn the_points_the_docs_name_exist() {
        let ids: Vec<String> = STUDIES
            .iter()
            .flat_map(|(n, _)| build(n, Scale::parse("1").unwrap(), &[]).unwrap().points)
            .map(|p| p.id)
            .collect();
        let mut named = 0;
        for doc in ["docs/studies.md", "README.md"] {
            let text = std::fs::read_to_string(format!("{}/../../{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            for (at, _) in text.match_indices("point") {
                let rest = &text[at + "point".len()..];
                let rest = rest.strip_prefix('s').unwrap_or(rest);
                let Some(name) = rest.strip_prefix(" `").and_then(|r| r.split('`').next()) else {
                    continue;
                };
                named += 1;
                assert!(
                    ids.iter().any(|id| super::super::glob(name, id)),
                    "{doc} names point `{name}`, which no study has"
                );
            }
        }
        assert!(named >= 3, "the docs name {named} points");
    }

    #[test]
    fn every_study_is_consistent() {
        let scale = Scale::parse("0.001").unwrap();
        for (name, nodes) in STUDIES.iter().flat_map(|(n, _)| [(*n, vec![]), (*n, vec![4, 16])]) {
            let s = build(name, scale, &nodes).unwrap();
            assert_eq!(s.name, name);
            let ids: std::collections::BTreeSet<_> = s.points.iter().map(|p| p.id.as_str()).collect();
            assert_eq!(ids.len(), s.points.len(), "{name}: point ids are unique");
            for t in &s.tables {
                for r in &t.rows {
                    assert_eq!(r.labels.len(), t.row_header.len(), "{name}: {}", t.title);
                    assert_eq!(r.cells.len(), t.columns.len(), "{name}: {}", t.title);
                    for c in &r.cells {
                        assert!(
                            ids.contains(c.point.as_str()),
                            "{name}: cell of unknown point {}",
                            c.point
                        );
                    }
                }
            }
            // Every job of every point validates.
            for p in &s.points {
                dfsbench_core::config::validate(&Default::default(), &p.jobs)
                    .unwrap_or_else(|e| panic!("{name} {}: {e}", p.id));
            }
        }
        assert_eq!(pub_size(10 * GB), "10 GB");
        assert_eq!(pub_size(10 * KB), "10 KB");
        assert_eq!(build("nope", scale, &[]).map(|s| s.name), None);
    }
}
