//! `fuzz`: the generator of well-formed Relax programs and the differential fuzz
//! targets (`cargo fuzz run diff_exec`).
//!
//! Empty for now: the "Program generator and fuzz targets" issue builds it.
//! Nothing here claims to work yet.
