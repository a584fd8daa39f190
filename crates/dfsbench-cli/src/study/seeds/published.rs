//! The publications' own figures, kept as data beside the catalog (`catalog/published/STUDY.tsv`:
//! each number with its seed file and the table, figure or section it is printed in, and the
//! paper's hardware), for the page of `dfsbench study all`.

use dfsbench_report::published::{parse, Published};

use crate::failure::Failure;

/// The file of each seed study.
const FILES: [(&str, &str); 5] = [
    ("size-sweep", include_str!("../catalog/published/size-sweep.tsv")),
    ("clients-sweep", include_str!("../catalog/published/clients-sweep.tsv")),
    ("dfsperf", include_str!("../catalog/published/dfsperf.tsv")),
    ("surfnet", include_str!("../catalog/published/surfnet.tsv")),
    ("fio-matrix", include_str!("../catalog/published/fio-matrix.tsv")),
];

/// The published figures of the seed study `study` (none for another study).
pub fn of(study: &str) -> Result<Published, Failure> {
    let Some((_, text)) = FILES.iter().find(|(s, _)| *s == study) else {
        return Ok(Published::default());
    };
    parse(text).map_err(|e| Failure::runtime(format!("catalog/published/{study}.tsv: {e}")))
}

#[cfg(test)]
mod tests {
    use super::super::super::{catalog, scale::Scale};
    use super::*;

    /// The seed file of each study, as STUDIES.md names them.
    const SEEDS: [(&str, &str); 5] = [
        ("size-sweep", "000_529a54b9192bcd68.txt"),
        ("clients-sweep", "001_fa73fd1af02ac1e0.txt"),
        ("dfsperf", "002_f9927a88126f4750.txt"),
        ("surfnet", "003_58e89ffa19cf4598.txt"),
        ("fio-matrix", "004_ae6fccd7e65edd80.txt"),
    ];

    /// Every line names its study's seed file and the table, figure or section of it; goes
    /// beside a table the study has; and (with DFSBENCH_SEEDS naming the folder of the seed
    /// texts) its number and its table or figure are in that text.
    #[test]
    fn every_published_figure_names_its_seed_and_where_in_it() {
        let seeds_dir = std::env::var_os("DFSBENCH_SEEDS").map(std::path::PathBuf::from);
        assert_eq!(FILES.map(|f| f.0), super::super::STUDIES);
        for (study, seed) in SEEDS {
            let p = of(study).unwrap();
            assert_eq!(p.seed, seed, "{study}");
            assert!(!p.hardware.is_empty() && !p.publication.is_empty(), "{study}");
            assert!(p.none.is_some() == p.figures.is_empty(), "{study}: figures or why none");
            let built = catalog::build(study, Scale::parse("1").unwrap(), &[]).unwrap();
            let text = seeds_dir
                .as_ref()
                .map(|d| std::fs::read_to_string(d.join(seed)).unwrap());
            for f in &p.figures {
                assert_eq!(f.seed, seed, "{study}: {f:?}");
                assert!(
                    ["Table ", "Figure ", "§", "Appendix "]
                        .iter()
                        .any(|w| f.place.contains(w)),
                    "{study}: where in the seed: {f:?}"
                );
                assert!(!f.system.is_empty() && !f.unit.is_empty(), "{f:?}");
                if !f.beside.is_empty() {
                    let words = f.beside.to_lowercase();
                    assert!(
                        built.tables.iter().any(|t| t.title.to_lowercase().contains(&words)),
                        "{study}: no table of '{}'",
                        f.beside
                    );
                }
                if let Some(text) = &text {
                    assert!(text.contains(&f.text), "{study}: {} is not in {seed}", f.text);
                    let name = f
                        .place
                        .split(['(', ',', ':'])
                        .find(|p| p.contains("Table") || p.contains("Figure"));
                    if let Some(name) = name.map(|n| n.trim().trim_start_matches("table ").trim_matches('"')) {
                        assert!(text.contains(name), "{study}: '{name}' is not in {seed}");
                    }
                }
            }
        }
    }
}
