//! Browser data beyond one page: downloads, bookmarks and history, permission leases, and
//! network routes (an agent's rules for its tabs' requests).
//! What is read or set through a page (its cookies, its storage, a file input's files)
//! is a page operation, in the page room.
//!
//! May import the page and browser rooms and the base modules; never agents or
//! recordings.

pub mod bookmarks;
pub mod downloads;
pub mod history;
pub mod permissions;
pub mod routes;
