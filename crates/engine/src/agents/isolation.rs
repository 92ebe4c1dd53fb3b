//! Sessions kept apart (`SessionBrowsers::IsolatedContexts`, `PerSession`): each writes
//! its files in a folder of its own, and under contexts each opens its tabs in a browser
//! context of its own and sees no other's.
//!
//! A context is made on the session's first tab and disposed of when the session ends
//! (its tabs close with it). What another session's context holds (its tabs, cookies,
//! storage, permissions, cache) is out of this session's reach: its tabs are not listed,
//! found by handle, taken as a default or searched.

use std::sync::Arc;

use super::AgentSession;
use crate::browser::{Browser, DebugTarget, Tab};
use crate::config::{EngineConfig, SessionBrowsers};
use crate::error::Result;

/// The configuration of a session kept apart: its files go under `sessions/<id>` of the
/// output dir, and downloads may land only there (not in the operator's download roots,
/// which every session would share).
pub(super) fn own_config(engine: &EngineConfig) -> EngineConfig {
    let mut own = engine.clone();
    own.output_dir = engine
        .output_dir
        .join("sessions")
        .join(crate::ids::unique("session"));
    own.download_roots.clear();
    own
}

impl AgentSession {
    /// Whether this session is kept apart from the others (a context or a browser of
    /// its own).
    pub fn is_isolated(&self) -> bool {
        self.engine.config.sessions != SessionBrowsers::Shared
    }

    /// Userscripts go into every tab of every session: refused when sessions are kept
    /// apart, or one agent's script would run in another's pages.
    pub fn may_share_userscripts(&self) -> Result<()> {
        if self.is_isolated() {
            return Err(crate::error::EngineError::Unsupported(
                "userscripts run in every session's tabs, and this server keeps sessions apart (--isolate-sessions or --browser-per-session)".into(),
            ));
        }
        Ok(())
    }

    fn uses_contexts(&self) -> bool {
        self.engine.config.sessions == SessionBrowsers::IsolatedContexts
    }

    /// Whether this session may see a tab: any, unless sessions have contexts of their
    /// own; then only the tabs of its own context.
    pub(crate) fn sees(&self, browser: &Browser, tab: &Tab) -> bool {
        self.sees_context(browser, tab.context.as_deref())
    }

    /// Whether this session may see what lives in a browser context (None: the
    /// browser's default one).
    fn sees_context(&self, browser: &Browser, context: Option<&str>) -> bool {
        !self.uses_contexts()
            || context.is_some_and(|context| self.own_context(browser).as_deref() == Some(context))
    }

    /// The context this session made in `browser`, if it made one there (a browser
    /// relaunched since holds none of it).
    fn own_context(&self, browser: &Browser) -> Option<String> {
        self.context
            .lock()
            .as_ref()
            .filter(|(made_in, _)| std::ptr::eq(made_in.as_ptr(), browser))
            .map(|(_, id)| id.clone())
    }

    /// Every CDP target of the browser a handle names (or this session's) that this
    /// session may see.
    pub async fn debug_targets(&self, handle: Option<&str>) -> Result<Vec<DebugTarget>> {
        let browser = self.browser_for(handle).await?;
        let targets = browser.all_targets().await?;
        Ok(targets
            .into_iter()
            .filter(|target| self.sees_context(&browser, target.context.as_deref()))
            .collect())
    }

    /// This session's context in `browser`, made (with its downloads caught into the
    /// session's folder) the first time; None unless sessions have contexts.
    pub(super) async fn context_in(&self, browser: &Arc<Browser>) -> Result<Option<String>> {
        if !self.uses_contexts() {
            return Ok(None);
        }
        if let Some(id) = self.own_context(browser) {
            return Ok(Some(id));
        }
        let id = browser.create_context().await?;
        crate::data::downloads::catch_downloads_in(browser, &self.config, Some(&id)).await?;
        *self.context.lock() = Some((Arc::downgrade(browser), id.clone()));
        tracing::info!(session = self.id, context = %id, "the session's browser context was made");
        Ok(Some(id))
    }

    /// Opens a tab for this session: in its own context, when it has one.
    pub(crate) async fn open_tab(
        &self,
        browser: &Arc<Browser>,
        url: &str,
        active: bool,
        owner: Option<&str>,
        window: Option<(u32, u32)>,
    ) -> Result<Tab> {
        let context = self.context_in(browser).await?;
        browser
            .open_tab_in(url, active, owner, window, context.as_deref())
            .await
    }
}
