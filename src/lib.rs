//! exhibit: a folder of sanitized benchmark-campaign artifacts in, a verified
//! static publication out.
//!
//! The pipeline, one stage per module, data flowing one way (the stages,
//! the value each hands the next and where state lives: ARCHITECTURE.md):
//! [`campaign`] (find and load campaigns, as loaded) -> [`manifest`] +
//! [`evidence`] (hash and verify every file) -> [`public`] (scan every
//! file, number private values with [`redact`]: the public view of
//! names, metadata and page names) -> [`copies`] (publish every file,
//! redacted, through the [`sink`] before any page: pages show the copies'
//! hashes; [`commit`] ties redacted copies to their originals for key
//! holders) -> [`page`] (Markdown and `exhibit` blocks, reading [`data`]
//! through [`expr`]) -> [`blocks`] (cards, tables, charts, ledgers as
//! HTML/SVG) -> [`render`] (tera templates) -> [`site`] (the build, one
//! file per stage: write, SHA256SUMS, audit.json, rescan, [`gate`]
//! refusing script, swap in; [`single`] for the one-file copy). The names
//! of what a build writes are in [`layout`], which [`verify`], [`seal`]
//! and [`serve`] read too; [`verify`] and [`seal`] reuse the evidence
//! stage; [`serve`] owns the [`site::BuildCache`]; [`cli`] sits at the
//! edge.

pub mod blocks;
pub mod campaign;
mod claims;
pub mod cli;
pub mod commit;
pub mod copies;
pub mod data;
pub mod error;
pub mod evidence;
pub mod expr;
pub mod formats;
pub mod fsx;
pub mod gate;
pub mod hash;
pub mod html;
pub mod layout;
pub mod manifest;
pub mod new;
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
