//! `loopguard dashboard`: a local web app over the state home — the live feed of the audit logs,
//! the breaker, grants and yolo, escalations, the loop canvas — and the human actions, carried
//! out by the CLI's own functions. It is a client of the local state, never its owner: it reads
//! the files the hook writes and changes them only through `control`.
//!
//! Access: bound to 127.0.0.1 on a random port unless the user policy allows other binds; a
//! one-time token in the printed link's fragment (kept in the state home until redeemed) is
//! traded once for a session secret the page keeps in its tab and sends as a Bearer header (no
//! cookie: one for 127.0.0.1 would reach every local port); every request's `Host` must name
//! the dashboard (DNS rebinding); every action needs a matching `Origin` and the operator's
//! passphrase. The hook refuses agents the port and the token ([`live`]); the state home,
//! where the token file lives, was already theirs to keep out of. In a fleet, a fleet view
//! reads the fleet's database ([`fleet_view`]).

pub mod actions;
pub mod feed;
pub mod fleet_view;
pub mod live;
mod server;
pub mod views;

pub use server::{Options, run};
