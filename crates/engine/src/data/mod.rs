//! Browser data: cookies and web storage of a page, downloads and uploads, bookmarks and
//! history, and permission leases.
//!
//! May import the page and browser rooms and the base modules; never agents or
//! recordings.

pub mod bookmarks;
pub mod cookies;
pub mod downloads;
pub mod history;
pub mod permissions;
pub mod storage;
pub mod uploads;
