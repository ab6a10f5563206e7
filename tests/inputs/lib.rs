//! Empty on purpose: this package is never built (see Cargo.toml).
