//! Views of dfsbench result documents: the table a run prints, CSV, Markdown, a JSON summary,
//! comparisons of two runs and a self-contained HTML report with SVG charts. Every view is
//! derived from the result JSON (its merged histograms and per-second series, never per-request
//! logs), so any old run can be re-reported.

pub mod compare;
mod csv;
pub mod errors;
pub mod faults;
pub mod figures;
pub mod flags;
pub mod html;
mod html_tables;
pub mod input;
pub mod latency;
pub mod lines;
pub mod markdown;
pub mod noise;
mod run_table;
pub mod runs;
pub mod stonewall;
pub mod study_page;
pub mod summary;
pub mod svg;
pub mod sweep;
#[cfg(any(test, feature = "fixtures"))]
pub mod synthetic;
mod table;

pub use csv::{long_csv, phases_csv};
pub use dfsbench_result::units as fmt;
pub use dfsbench_result::units::rate_si;
pub use faults::{faults_table, stall_lines};
pub use flags::notes;
pub use run_table::{cpu_table, endpoints_table, phases_table, rate_table};
