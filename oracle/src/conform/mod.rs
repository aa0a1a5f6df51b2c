//! `oracle conform`: runs the corpus through another implementation's adapter
//! (conformance/PROTOCOL.md) and reports what it found.

pub mod html;
pub mod results;
