//! exhibit: a folder of sanitized benchmark-campaign artifacts in, a verified
//! static publication out.
//!
//! The pipeline, one stage per module, data flowing one way:
//! [`campaign`] (find and load campaigns) -> [`manifest`] + [`evidence`]
//! (hash and verify every file) -> [`public`] (scan every file, number
//! private values, redact names) -> [`copies`] (publish every file,
//! redacted, before any page: pages show the copies' hashes; [`commit`]
//! ties redacted copies to their originals for key holders) -> [`page`] (Markdown and `exhibit` blocks,
//! reading [`data`] through [`expr`]) -> [`blocks`] (cards, tables, charts,
//! ledgers as HTML/SVG) -> [`render`] (tera templates) -> [`site`] (write,
//! SHA256SUMS, audit.json, [`gate`] refusing script, swap in; [`single`] for the one-file copy). [`verify`] and [`seal`] reuse the
//! evidence stage; [`cli`] sits at the edge.

pub mod blocks;
pub mod campaign;
pub mod cli;
pub mod commit;
pub mod copies;
pub mod data;
pub mod error;
pub mod evidence;
pub mod expr;
pub mod fsx;
pub mod gate;
pub mod hash;
pub mod html;
pub mod layout;
pub mod manifest;
pub mod page;
pub mod public;
pub mod redact;
pub mod render;
pub mod seal;
pub mod serve;
pub mod single;
pub mod sink;
pub mod site;
pub mod verify;
