//! Options several workloads read, each declared once (clap allows a flag only once): the file
//! counts, sizes and phases, and the block size and I/O flags. A workload lists the ones it
//! reads in [`Kind::SHARED`](super::Kind::SHARED); a job that sets another is refused.

use serde::{Deserialize, Serialize};

use crate::data::DataShape;
use crate::dist::Access;
use crate::error::ConfigError;
use crate::units::parse_size;
use crate::workloads::RunSettings;

#[derive(clap::Args, Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedOptions {
    /// Files per worker (meta, files; mix: pool per worker; iterate: per worker and iteration).
    #[arg(long, visible_alias = "nrfiles", value_name = "N", help_heading = "meta and files")]
    pub files: Option<u64>,

    /// Phases to run, comma-separated (meta: mkdir,create,stat,open,list,rename,delete,rmdir; files: write,read,delete).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "meta and files")]
    pub phases: Option<Vec<String>>,

    /// Size of each file (files): 0, 4k, 10m, 1024000 ...
    #[arg(long, value_name = "SIZE", help_heading = "meta and files")]
    pub file_size: Option<String>,

    /// files: size sweep of COUNTxSIZE (10000x0,1000x10k,10x1g); mix: size distribution, 4k
    /// (fixed), 4k-1m (uniform), 4k~1m or log:4k-1m (log-uniform), 4k:70,1m:30 (weighted).
    #[arg(long, value_delimiter = ',', value_name = "LIST", help_heading = "meta and files")]
    pub sizes: Option<Vec<String>>,

    /// Block size (io; files: bytes per write/read call) [default: io 4k, files 1m].
    #[arg(long, visible_alias = "blocksize", value_name = "SIZE", help_heading = "io")]
    pub bs: Option<String>,

    /// Bypass the page cache with O_DIRECT (--direct or --direct=1).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = parse_flag, help_heading = "io")]
    pub direct: Option<bool>,

    /// fsync written files before close (files) or at the end of writing (io).
    #[arg(long, value_name = "0|1", num_args = 0..=1, default_missing_value = "1", value_parser = parse_flag, help_heading = "io")]
    pub fsync: Option<bool>,

    /// Written data: the share of every 512-byte segment that is zeros, 0-100 (fio's
    /// buffer_compress_percentage); with it or --dedupe-percentage every block is generated
    /// anew [default: one random buffer repeated].
    #[arg(
        long,
        visible_alias = "buffer_compress_percentage",
        value_name = "PCT",
        help_heading = "data and access"
    )]
    pub compress_percentage: Option<u32>,

    /// Written data: the share of blocks (bs) that are copies of one block of the job, 0-100
    /// (fio's dedupe_percentage); not with --verify.
    #[arg(long, value_name = "PCT", help_heading = "data and access")]
    pub dedupe_percentage: Option<u32>,

    /// MLPerf Storage preset: train's unet3d, resnet50 or cosmoflow [default: unet3d];
    /// checkpoint's llama3-8b, llama3-70b, llama3-405b or llama3-1t.
    #[arg(long, value_name = "NAME", help_heading = "train and checkpoint")]
    pub preset: Option<String>,

    /// The preset's size times this factor, e.g. 0.01 (train: its dataset's files, at least
    /// one; checkpoint: each rank's shard) [default: 1].
    #[arg(long, value_name = "F", help_heading = "train and checkpoint")]
    pub scale: Option<f64>,

    /// Random picks of blocks (io) and files (files reads, mix): random, zipf:THETA,
    /// pareto:H, normal[:DEV%] or zoned:60/10:40/90 (fio's random_distribution) [default:
    /// random].
    #[arg(long, value_name = "DIST", help_heading = "data and access")]
    pub random_distribution: Option<String>,
}

/// Recorder classes of phases that read and write: reads and writes are measured apart, and
/// results list the kinds that occurred.
pub(crate) const READ: usize = 0;
pub(crate) const WRITE: usize = 1;
pub(crate) const RW_CLASSES: &[&str] = &["read", "write"];
/// The io workload's syncs every N writes are timed as operations of their own.
pub(crate) const SYNC: usize = 2;
pub(crate) const RW_SYNC_CLASSES: &[&str] = &["read", "write", "sync"];

/// A flag's value as fio writes it: 0 or 1 (or true/false, yes/no, on/off).
pub(crate) fn parse_flag(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{s}' is not 0 or 1")),
    }
}

/// A size key's value.
pub(crate) fn size_key(key: &'static str, text: &str) -> Result<u64, ConfigError> {
    parse_size(text).map_err(|e| ConfigError::unreadable(key, e))
}

/// An optional size key, or `default`.
pub(crate) fn size_or(key: &'static str, text: Option<&str>, default: u64) -> Result<u64, ConfigError> {
    text.map(|t| size_key(key, t)).transpose().map(|s| s.unwrap_or(default))
}

impl SharedOptions {
    /// The block size, or `default` when unset, checked.
    pub(crate) fn block_size(&self, default: u64) -> Result<usize, ConfigError> {
        let bs = size_or("bs", self.bs.as_deref(), default)?;
        if bs == 0 || bs > 1 << 30 {
            return Err(ConfigError::value("bs", bs, "give a block size between 1 byte and 1g"));
        }
        Ok(bs as usize)
    }

    /// The data options, checked against each other and `--verify`.
    pub(crate) fn data_shape(&self, run: &RunSettings) -> Result<DataShape, ConfigError> {
        let pct = |key: &'static str, v: Option<u32>| {
            v.map(|p| match u8::try_from(p) {
                Ok(p) if p <= 100 => Ok(p),
                _ => Err(ConfigError::value(key, p, "give a percentage from 0 to 100")),
            })
            .transpose()
        };
        let shape = DataShape {
            compress_percentage: pct("compress_percentage", self.compress_percentage)?,
            dedupe_percentage: pct("dedupe_percentage", self.dedupe_percentage)?,
            ..DataShape::default()
        };
        if shape.dedupe_percentage.unwrap_or(0) > 0 && run.verify == Some(true) {
            return Err("dedupe_percentage cannot go with verify: verified data names its file and offset in every sector, so no block repeats; leave out one of the two".into());
        }
        Ok(shape)
    }

    /// The preset's scale factor, checked [default: 1].
    pub(crate) fn scale(&self) -> Result<f64, ConfigError> {
        match self.scale.unwrap_or(1.0) {
            f if f.is_finite() && f > 0.0 && f <= 1e6 => Ok(f),
            f => Err(ConfigError::value("scale", f, "give a factor above 0, e.g. 0.01")),
        }
    }

    /// The access distribution of random picks, when given.
    pub(crate) fn access(&self) -> Result<Option<Access>, ConfigError> {
        Ok(self.random_distribution.as_deref().map(Access::parse).transpose()?)
    }
}

/// The phases named in `list`, known, without repeats, in the order they run.
pub(crate) fn parse_phases<T: Copy + Ord>(
    list: &[String],
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<Vec<T>, ConfigError> {
    let mut out = Vec::new();
    for p in list {
        let phase = all.iter().copied().find(|&x| name(x) == p.trim()).ok_or_else(|| {
            let names: Vec<_> = all.iter().map(|&x| name(x)).collect();
            ConfigError::from(format!("unknown phase '{p}': choose from {}", names.join(", ")))
        })?;
        if !out.contains(&phase) {
            out.push(phase);
        }
    }
    if out.is_empty() {
        return Err("phases is empty: name at least one phase".into());
    }
    out.sort();
    Ok(out)
}
