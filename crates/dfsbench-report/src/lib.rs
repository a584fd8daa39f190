//! Views of dfsbench result documents: the table a run prints, CSV, Markdown, a JSON summary,
//! comparisons of two runs and a self-contained HTML report with SVG charts. Every view is
//! derived from the result JSON (its merged histograms and per-second series, never per-request
//! logs), so any old run can be re-reported.
//!
//! The public surface is what the CLI and its tests name; everything else is the crate's own.

#![warn(unreachable_pub)]

mod checkpoint_table;
pub mod compare;
mod csv;
mod errors;
mod faults;
mod figures;
pub mod flags;
pub mod html;
mod html_tables;
pub mod input;
mod latency;
mod lines;
pub mod markdown;
pub mod noise;
pub mod published;
mod run_table;
pub mod runs;
pub mod seeds_page;
mod stonewall;
pub mod study_page;
pub mod summary;
pub mod svg;
mod sweep;
#[cfg(any(test, feature = "fixtures"))]
pub mod synthetic;
mod table;
mod train_figures;
mod train_table;

pub use checkpoint_table::{checkpoint_ranks_table, checkpoint_table};
pub use csv::{long_csv, phases_csv};
pub use dfsbench_result::units as fmt;
pub use dfsbench_result::units::rate_si;
pub use faults::{faults_table, stall_lines};
pub use flags::notes;
pub use run_table::{cpu_table, endpoints_table, groups_table, phases_table, rate_table};
pub use table::{left, right, Column, Table};
pub use train_table::{accelerator_search, accelerators_table, largest_held, search_table, train_table, SearchStep};
