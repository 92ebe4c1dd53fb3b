//! End-to-end tests: tabwire is started as a real MCP server (stdio or HTTP), driven by
//! rmcp's client, and drives a real Chromium against pages served on loopback. Each test
//! asserts what a user would observe on the page or on disk.

mod support;

mod agents;
mod basics;
mod browser_data;
mod capture;
mod chrome;
mod cli;
mod contract;
mod deadline;
mod emulation;
mod envelope;
mod extension;
mod fidelity;
mod fuzz;
mod hostile;
mod input;
mod lean;
mod lifecycle;
mod page_tools;
mod performance;
mod permissions;
mod pick;
mod profiles;
mod protocol;
mod reading;
mod recording;
mod routes;
mod script;
mod search;
mod sessions;
mod tabs;
mod userscript;
mod windows;
