//! The local store of past runs: one SQLite file with a row per run or study (id, time,
//! target, workload, config hash, status, tag, the path of its JSON) and the headline figures
//! of each measured phase. The result files stay the source of truth: the store is an index
//! of them, and `history --rebuild` makes it again from them.

use std::path::{Path, PathBuf};

use dfsbench_result::RunResult;
use rusqlite::{params, Connection, OptionalExtension};

/// The schema this build writes; a store with another is made again by `--rebuild`.
const VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    workload TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    tag TEXT,
    study TEXT,
    path TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS phases (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    label TEXT NOT NULL,
    ops_per_sec REAL NOT NULL,
    bytes_per_sec REAL NOT NULL,
    p50_ns INTEGER NOT NULL,
    p99_ns INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS runs_by_target ON runs (target, workload, started);
";

/// A run or study as the store holds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Recorded {
    pub id: String,
    pub started: String,
    /// `run` or `study`.
    pub kind: String,
    pub target: String,
    pub workload: String,
    pub config_hash: String,
    pub status: String,
    pub tag: Option<String>,
    /// The study a run was a point of.
    pub study: Option<String>,
    pub path: String,
    pub phases: Vec<Headline>,
}

/// A measured phase's headline figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Headline {
    pub label: String,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub errors: u64,
}

/// Which runs to list: each field set narrows the list.
#[derive(Debug, Default)]
pub struct Filter {
    /// A substring of the target URI.
    pub target: Option<String>,
    pub workload: Option<String>,
    pub tag: Option<String>,
    pub kind: Option<String>,
    /// The newest N (listed oldest first).
    pub last: Option<usize>,
}

/// The store at `path`, made (with its folder) when missing.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        }
        let unreadable = |e: rusqlite::Error| {
            format!(
                "the history store {} is unreadable ({e}): `dfsbench history --rebuild` makes it again from the result files",
                path.display()
            )
        };
        let conn = Connection::open(path).map_err(unreadable)?;
        // Runs of one machine (or the test suite's) may end at once.
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(unreadable)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(unreadable)?;
        if version != 0 && version != VERSION {
            return Err(format!(
                "the history store {} was written by another dfsbench (schema {version}, this one writes {VERSION}): `dfsbench history --rebuild` makes it again",
                path.display()
            ));
        }
        conn.execute_batch(SCHEMA).map_err(unreadable)?;
        conn.execute_batch(&format!("PRAGMA user_version = {VERSION}; PRAGMA foreign_keys = ON;"))
            .map_err(unreadable)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Record a run's result file (again: a second record of one run id replaces the first).
    pub fn record_run(
        &mut self,
        r: &RunResult,
        file: &Path,
        tag: Option<&str>,
        study: Option<&str>,
    ) -> Result<(), String> {
        let row = Recorded {
            id: r.run_id.clone(),
            started: r.started_at.clone(),
            kind: "run".into(),
            target: r.target.uri.clone(),
            workload: workload_of(r),
            config_hash: r.config_hash.clone(),
            status: r.status.clone(),
            tag: tag.map(str::to_string),
            study: study.map(str::to_string),
            path: absolute(file),
            phases: headlines(r),
        };
        self.insert(&row)
    }

    /// Record a study: its manifest, by study id.
    pub fn record_study(&mut self, row: Recorded) -> Result<(), String> {
        self.insert(&row)
    }

    fn insert(&mut self, row: &Recorded) -> Result<(), String> {
        let failed = |e: rusqlite::Error| format!("cannot record run {} in {}: {e}", row.id, self.path.display());
        let tx = self.conn.transaction().map_err(failed)?;
        tx.execute("DELETE FROM phases WHERE run_id = ?1", params![row.id])
            .map_err(failed)?;
        tx.execute(
            "INSERT OR REPLACE INTO runs (id, started, kind, target, workload, config_hash, status, tag, study, path)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                row.id,
                row.started,
                row.kind,
                row.target,
                row.workload,
                row.config_hash,
                row.status,
                row.tag,
                row.study,
                row.path
            ],
        )
        .map_err(failed)?;
        for (seq, p) in row.phases.iter().enumerate() {
            tx.execute(
                "INSERT INTO phases (run_id, seq, label, ops_per_sec, bytes_per_sec, p50_ns, p99_ns, errors)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    row.id,
                    seq as i64,
                    p.label,
                    p.ops_per_sec,
                    p.bytes_per_sec,
                    p.p50_ns as i64,
                    p.p99_ns as i64,
                    p.errors as i64
                ],
            )
            .map_err(failed)?;
        }
        tx.commit().map_err(failed)
    }

    /// The runs the filter keeps, oldest first.
    pub fn runs(&self, f: &Filter) -> Result<Vec<Recorded>, String> {
        let mut sql = String::from(
            "SELECT id, started, kind, target, workload, config_hash, status, tag, study, path FROM runs WHERE 1 = 1",
        );
        let mut args: Vec<String> = Vec::new();
        if let Some(t) = &f.target {
            args.push(format!(
                "%{}%",
                t.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
            ));
            sql += &format!(" AND target LIKE ?{} ESCAPE '\\'", args.len());
        }
        for (column, value) in [("workload", &f.workload), ("tag", &f.tag), ("kind", &f.kind)] {
            if let Some(v) = value {
                args.push(v.clone());
                sql += &format!(" AND {column} = ?{}", args.len());
            }
        }
        sql += " ORDER BY started DESC, id DESC";
        if let Some(n) = f.last {
            sql += &format!(" LIMIT {n}");
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.unreadable(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                Ok(Recorded {
                    id: r.get(0)?,
                    started: r.get(1)?,
                    kind: r.get(2)?,
                    target: r.get(3)?,
                    workload: r.get(4)?,
                    config_hash: r.get(5)?,
                    status: r.get(6)?,
                    tag: r.get(7)?,
                    study: r.get(8)?,
                    path: r.get(9)?,
                    phases: Vec::new(),
                })
            })
            .map_err(|e| self.unreadable(e))?;
        let mut out = rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.unreadable(e))?;
        out.reverse();
        for run in &mut out {
            run.phases = self.headlines(&run.id)?;
        }
        Ok(out)
    }

    fn headlines(&self, id: &str) -> Result<Vec<Headline>, String> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT label, ops_per_sec, bytes_per_sec, p50_ns, p99_ns, errors FROM phases WHERE run_id = ?1 ORDER BY seq",
            )
            .map_err(|e| self.unreadable(e))?;
        let rows = stmt
            .query_map(params![id], |r| {
                Ok(Headline {
                    label: r.get(0)?,
                    ops_per_sec: r.get(1)?,
                    bytes_per_sec: r.get(2)?,
                    p50_ns: r.get::<_, i64>(3)? as u64,
                    p99_ns: r.get::<_, i64>(4)? as u64,
                    errors: r.get::<_, i64>(5)? as u64,
                })
            })
            .map_err(|e| self.unreadable(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.unreadable(e))
    }

    /// The newest stored run of the same target, workload and configuration as `new` (other
    /// than `new` itself), with `tag` when one is given.
    pub fn baseline(&self, new: &RunResult, tag: Option<&str>) -> Result<Option<Recorded>, String> {
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE kind = 'run' AND target = ?1 AND workload = ?2 AND config_hash = ?3
                 AND id != ?4 AND started <= ?5 AND (?6 IS NULL OR tag = ?6)
                 ORDER BY started DESC, id DESC LIMIT 1",
                params![
                    new.target.uri,
                    workload_of(new),
                    new.config_hash,
                    new.run_id,
                    new.started_at,
                    tag
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.unreadable(e))?;
        let Some(id) = id else { return Ok(None) };
        let mut runs = self.runs(&Filter::default())?;
        runs.retain(|r| r.id == id);
        Ok(runs.pop())
    }

    /// The result files the store points to.
    pub fn paths(&self) -> Result<Vec<PathBuf>, String> {
        let mut stmt = self
            .conn
            .prepare("SELECT path FROM runs")
            .map_err(|e| self.unreadable(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.unreadable(e))?;
        let paths = rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.unreadable(e))?;
        Ok(paths.into_iter().map(PathBuf::from).collect())
    }

    fn unreadable(&self, e: rusqlite::Error) -> String {
        format!(
            "the history store {} is unreadable ({e}): `dfsbench history --rebuild` makes it again from the result files",
            self.path.display()
        )
    }
}

/// The workloads of a run's measured phases, in order, joined with `+`.
pub fn workload_of(r: &RunResult) -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in &r.phases {
        if !names.contains(&p.workload.as_str()) {
            names.push(&p.workload);
        }
    }
    names.join("+")
}

fn headlines(r: &RunResult) -> Vec<Headline> {
    r.phases
        .iter()
        .filter(|p| !p.prepare)
        .map(|p| Headline {
            label: p.label.clone(),
            ops_per_sec: p.ops_per_sec,
            bytes_per_sec: p.bytes_per_sec,
            p50_ns: p.latency.p50_ns,
            p99_ns: p.latency.p99_ns,
            errors: p.errors.total,
        })
        .collect()
}

fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, started: &str, ops: f64) -> RunResult {
        let mut r = dfsbench_report::synthetic::long_run(5, 1);
        r.run_id = id.into();
        r.started_at = started.into();
        r.target.uri = "/data/bench".into();
        r.config_hash = "h1".into();
        for p in &mut r.phases {
            p.ops_per_sec = ops;
        }
        r
    }

    #[test]
    fn runs_are_listed_filtered_and_found_as_baselines() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("h/history.sqlite")).unwrap();
        s.record_run(
            &result("a", "2026-01-01T00:00:00Z", 100.0),
            Path::new("a.json"),
            None,
            None,
        )
        .unwrap();
        s.record_run(
            &result("b", "2026-01-02T00:00:00Z", 200.0),
            Path::new("b.json"),
            Some("v1"),
            None,
        )
        .unwrap();
        let c = result("c", "2026-01-03T00:00:00Z", 300.0);
        s.record_run(&c, Path::new("c.json"), None, None).unwrap();

        let all = s.runs(&Filter::default()).unwrap();
        assert_eq!(all.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert!(all[0].path.ends_with("/a.json") && Path::new(&all[0].path).is_absolute());
        assert_eq!(all[2].phases[0].ops_per_sec, 300.0);
        let last = s
            .runs(&Filter {
                last: Some(2),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(last.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["b", "c"]);
        let none = s
            .runs(&Filter {
                target: Some("%".into()),
                ..Filter::default()
            })
            .unwrap();
        assert!(none.is_empty(), "% in a filter is a character, not a wildcard");

        assert_eq!(s.baseline(&c, None).unwrap().unwrap().id, "b", "the newest run before");
        assert_eq!(s.baseline(&c, Some("v1")).unwrap().unwrap().id, "b");
        assert!(s.baseline(&c, Some("v2")).unwrap().is_none());
        let mut other = c.clone();
        other.config_hash = "h2".into();
        assert!(
            s.baseline(&other, None).unwrap().is_none(),
            "another configuration is no baseline"
        );

        // A second record of a run replaces the first.
        s.record_run(
            &result("a", "2026-01-01T00:00:00Z", 150.0),
            Path::new("a.json"),
            None,
            None,
        )
        .unwrap();
        let a = &s.runs(&Filter::default()).unwrap()[0];
        assert_eq!((a.id.as_str(), a.phases[0].ops_per_sec), ("a", 150.0));
    }

    #[test]
    fn a_corrupt_store_says_how_to_make_it_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        std::fs::write(
            &path,
            b"this is no database, just bytes that fill a page or two..........",
        )
        .unwrap();
        let e = Store::open(&path).err().expect("refused");
        assert!(e.contains("--rebuild"), "{e}");
    }
}
