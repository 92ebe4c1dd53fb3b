//! A session's way into the engine's shared services: recordings, permission leases,
//! downloads. Each resolves the session's tab (or browser) and names the session as the
//! owner; the service does the work.

use crate::ids::Deadline;

use serde_json::Value;

use super::AgentSession;
use crate::browser::TabInfo;
use crate::data::downloads::{self, DownloadRequest, DownloadWait, FoundDownload};
use crate::data::permissions::{Lease, LeaseRequest, Reset};
use crate::error::Result;
use crate::recordings::gif::{GifOptions, GifSaved, GifStatus};
use crate::recordings::insights::TraceReport;
use crate::recordings::trace::StoppedTrace;
use crate::recordings::{
    CaptureStarted, ConsolePage, ConsoleRead, ConsoleRecord, ConsoleStopped, NetworkFilter,
    NetworkOptions, NetworkStopped,
};
use crate::search::{SearchReport, SearchRequest};

impl AgentSession {
    /// Searches every open tab of every connected browser (not only this session's: the
    /// tool exists to find the tab the agent does not know about).
    /// A session kept apart from the others searches only the tabs it may see.
    pub async fn search_tabs(&self, request: &SearchRequest) -> Result<SearchReport> {
        if !self.is_isolated() {
            return self.engine.search.search(request).await;
        }
        let mut visible = Vec::new();
        for browser in self.engine.browsers.connected_of(self.id) {
            visible.extend(
                browser
                    .tabs()
                    .into_iter()
                    .filter(|tab| self.sees(&browser, tab))
                    .map(|tab| tab.tab_id),
            );
        }
        let mut own = request.clone();
        own.tab_ids = Some(match &request.tab_ids {
            Some(asked) => asked
                .iter()
                .copied()
                .filter(|id| visible.contains(id))
                .collect(),
            None => visible,
        });
        self.engine.search.search(&own).await
    }

    pub async fn network_capture_start(
        &self,
        handle: Option<&str>,
        options: NetworkOptions,
        deadline: Deadline,
    ) -> Result<CaptureStarted> {
        let page = self.page(handle).await?;
        self.engine
            .recordings
            .start_network(&page, self.id, options, deadline)
            .await
    }

    pub async fn network_capture_stop(
        &self,
        handle: Option<&str>,
        filter: NetworkFilter,
        deadline: Deadline,
    ) -> Result<NetworkStopped> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        self.engine
            .recordings
            .stop_network(&browser, &tab, self.id, filter, deadline)
            .await
    }

    pub async fn console_capture_start(
        &self,
        handle: Option<&str>,
        max_entries: usize,
        deadline: Deadline,
    ) -> Result<CaptureStarted> {
        let page = self.page(handle).await?;
        self.engine
            .recordings
            .start_console(&page, self.id, max_entries, deadline)
            .await
    }

    pub async fn console_messages(
        &self,
        handle: Option<&str>,
        page: ConsolePage,
    ) -> Result<ConsoleRead> {
        let (_, tab) = self.resolve_tab(handle).await?;
        self.engine.recordings.console_messages(&tab, self.id, page)
    }

    pub async fn console_capture_stop(&self, handle: Option<&str>) -> Result<ConsoleStopped> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        self.engine
            .recordings
            .stop_console(&browser, &tab, self.id)
            .await
    }

    pub async fn set_site_permission(
        &self,
        handle: Option<&str>,
        request: LeaseRequest<'_>,
    ) -> Result<Lease> {
        let page = self.page(handle).await?;
        self.engine.leases.set(page, request).await
    }

    pub async fn reset_site_permissions(
        &self,
        handle: Option<&str>,
        origin: Option<&str>,
        permission: Option<&str>,
    ) -> Result<Reset> {
        let browser = self.browser_for(handle).await?;
        self.engine.leases.reset(&browser, origin, permission).await
    }

    /// Downloads in the browser `handle` names (its profile's cookies), else this
    /// session's.
    pub async fn download(
        &self,
        handle: Option<&str>,
        request: DownloadRequest,
    ) -> Result<downloads::Downloaded> {
        let browser = self.browser_for(handle).await?;
        // Under isolation it runs in this session's context, with its cookies.
        let context = self.context_in(&browser).await?;
        downloads::download(browser, self.config.clone(), request, context).await
    }

    /// The console output the page has logged so far (see `Recordings::console_snapshot`).
    pub async fn console_snapshot(
        &self,
        handle: Option<&str>,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<ConsoleRecord>> {
        let page = self.page(handle).await?;
        self.engine
            .recordings
            .console_snapshot(&page, max, deadline)
            .await
    }

    /// Waits for a download a page of this session's browser started.
    pub async fn wait_for_download(
        &self,
        handle: Option<&str>,
        wait: DownloadWait,
    ) -> Result<FoundDownload> {
        let browser = self.browser_for(handle).await?;
        downloads::wait_for_download(&browser, &self.config, wait).await
    }

    /// Checks an agent's raw CDP command against `policy`, the files it names against
    /// the engine's upload roots: the one gate for every raw command.
    pub async fn check_raw(
        &self,
        policy: &crate::page::raw::Policy,
        method: &str,
        params: Value,
    ) -> Result<crate::page::raw::RawCommand> {
        let policy = crate::page::raw::Policy {
            isolated: self.is_isolated(),
            ..*policy
        };
        policy
            .check(method, params, &self.config.upload_roots)
            .await
    }

    /// Starts a performance trace of a tab (with `reload`, of its whole load).
    pub async fn trace_start(
        &self,
        handle: Option<&str>,
        reload: bool,
        deadline: Deadline,
    ) -> Result<crate::browser::TabInfo> {
        let page = self.page(handle).await?;
        self.engine
            .recordings
            .traces
            .start(&page, self.id, reload, deadline)
            .await?;
        Ok(page.info())
    }

    /// Stops this session's trace of a tab, saves it (its file's name starting with
    /// `save`, when given) and reads its insights.
    pub async fn trace_stop(
        &self,
        handle: Option<&str>,
        save: Option<&str>,
        deadline: Deadline,
    ) -> Result<(crate::browser::TabInfo, StoppedTrace)> {
        let page = self.page(handle).await?;
        let stopped = self
            .engine
            .recordings
            .traces
            .stop(&page, self.id, &self.config, save, deadline)
            .await?;
        Ok((page.info(), stopped))
    }

    /// This session's last stopped trace.
    pub fn last_trace(&self) -> Option<std::sync::Arc<TraceReport>> {
        self.engine.recordings.traces.last(self.id)
    }

    /// Starts a GIF recording of a tab.
    pub async fn gif_start(
        &self,
        handle: Option<&str>,
        options: GifOptions,
    ) -> Result<(TabInfo, GifStatus)> {
        let page = self.page(handle).await?;
        let status = self
            .engine
            .recordings
            .gifs
            .start(&page, self.id, options, &self.config)
            .await?;
        Ok((page.info(), status))
    }

    /// Takes a frame of this session's auto recording of a tab now, with the agent's
    /// annotation drawn on it.
    pub async fn gif_capture(
        &self,
        handle: Option<&str>,
        annotation: Option<String>,
    ) -> Result<(TabInfo, GifStatus)> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let status = self
            .engine
            .recordings
            .gifs
            .capture(&tab, self.id, annotation)
            .await?;
        Ok((browser.info(&tab, None), status))
    }

    /// Where this session's recording of a tab stands.
    pub async fn gif_status(&self, handle: Option<&str>) -> Result<(TabInfo, GifStatus)> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let status = self.engine.recordings.gifs.status(&tab, self.id)?;
        Ok((browser.info(&tab, None), status))
    }

    /// Ends this session's recording of a tab and saves it (named `name`, when given).
    pub async fn gif_stop(
        &self,
        handle: Option<&str>,
        name: Option<&str>,
    ) -> Result<(TabInfo, GifSaved)> {
        let gifs = &self.engine.recordings.gifs;
        let (browser, tab) = match self.resolve_tab(handle).await {
            Ok(found) => found,
            // The recorded tab closed (or its browser went): what it recorded until then
            // is still saved.
            Err(gone) => {
                let Some((tab, target)) = gifs.orphaned(self.id) else {
                    return Err(gone);
                };
                let saved = gifs
                    .stop_target(&target, self.id, &self.config, name)
                    .await?;
                return Ok((tab, saved));
            }
        };
        let saved = gifs.stop(&tab, self.id, &self.config, name).await?;
        Ok((browser.info(&tab, None), saved))
    }

    /// Drops this session's recording of a tab unsaved; whether there was one.
    pub async fn gif_clear(&self, handle: Option<&str>) -> Result<bool> {
        let (_, tab) = self.resolve_tab(handle).await?;
        self.engine.recordings.gifs.clear(&tab, self.id)
    }
}
