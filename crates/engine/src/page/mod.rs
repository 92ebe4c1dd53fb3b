//! Page operations on one reserved tab: navigation and waits, input and keys, reading
//! (snapshots), cookies, storage and file inputs, running an agent's script, screenshots
//! and PDFs, raw CDP. Every operation is CDP commands plus the page script (`page_script`),
//! whatever the link: nothing here knows which link carries the messages. A new page
//! operation goes here, as an `impl Page` in the file of its kind.
//!
//! May import the browser room and the base modules; never agents, data or recordings.

pub mod aftermath;
pub mod agent_js;
pub mod choose;
pub mod content;
pub mod cookies;
pub mod element_info;
pub mod emulation;
pub mod forms;
pub mod inject;
pub mod input;
pub mod keys;
pub mod locator;
pub mod navigation;
pub mod observation;
pub mod page_script;
pub mod pick;
pub mod raw;
pub mod read;
pub mod screenshot;
pub mod storage;
mod stream;
pub mod tree;
pub mod uploads;
pub mod webmcp;

use crate::ids::Deadline;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::OwnedMutexGuard;

use crate::browser::{Browser, Dialog, DialogPolicy, Tab, TabInfo, WORLD, exception_text};
use crate::config::EngineConfig;
use crate::error::{EngineError, ErrorCode, Result};

pub use navigation::check_url_scheme;

/// What an input did that may have opened a dialog.
#[derive(Debug)]
pub enum Acted<T> {
    Done(T),
    /// A dialog opened (and is open): the input reached the page, which now waits on it.
    DialogOpened(Dialog),
}

/// How long a call waits for the world a navigation is making before making its own.
const WORLD_WAIT: Duration = Duration::from_secs(1);

/// A tab reserved for one operation. Dropping it releases the reservation.
pub struct Page {
    pub browser: Arc<Browser>,
    pub tab: Tab,
    pub(crate) session: String,
    /// None for an observer (`Page::observe`), which reads without reserving.
    _reservation: Option<OwnedMutexGuard<()>>,
    pub(crate) config: Arc<EngineConfig>,
    /// Keys and mouse buttons the operation holds down now (see `input::Held`).
    held: parking_lot::Mutex<Vec<input::Held>>,
    /// Where the last click was aimed, set before its press: a click that a dialog
    /// interrupted still says where it landed.
    last_aim: parking_lot::Mutex<Option<input::Clicked>>,
}

impl Drop for Page {
    /// A key or button still down when the page is let go (the operation failed
    /// between press and release, or its call was cancelled) is released before the
    /// tab is: the next call never finds one stuck down.
    fn drop(&mut self) {
        let held = std::mem::take(&mut *self.held.lock());
        if held.is_empty() {
            return;
        }
        let reservation = self._reservation.take();
        let (browser, target) = (self.browser.clone(), self.tab.target_id.clone());
        let session = self.session.clone();
        browser.update_tab(&target, |tab| tab.releasing = true);
        tokio::spawn(async move {
            for held in held.into_iter().rev() {
                let released = browser
                    .conn
                    .call(
                        Some(&session),
                        held.method,
                        held.release,
                        crate::browser::HOUSEKEEPING,
                    )
                    .await;
                if let Err(error) = released {
                    tracing::debug!(%error, "could not release a held key or button");
                }
            }
            browser.update_tab(&target, |tab| tab.releasing = false);
            drop(reservation);
        });
    }
}

/// Where a script runs: a CDP session (the page's, or an out-of-process frame's) and an
/// execution context within it (None: the page's main world), plus how far that
/// document's viewport sits from the top document's.
#[derive(Debug, Clone)]
pub struct FrameContext {
    pub session: String,
    pub context_id: Option<i64>,
    pub offset: (f64, f64),
    pub framed: bool,
}

impl FrameContext {
    /// The same document, in another of its execution contexts.
    fn in_context(&self, context_id: i64) -> FrameContext {
        FrameContext {
            context_id: Some(context_id),
            ..self.clone()
        }
    }
}

impl Page {
    /// Reserves a tab for one operation and attaches to it. A tab another call holds
    /// answers `target_busy` at once; calls are never queued behind each other.
    pub async fn reserve(
        browser: Arc<Browser>,
        tab: Tab,
        config: Arc<EngineConfig>,
    ) -> Result<Page> {
        let reservation = match tab.busy.clone().try_lock_owned() {
            Ok(reservation) => reservation,
            Err(_) => {
                let holder = browser
                    .tab_by_target(&tab.target_id)
                    .and_then(|t| t.holder.clone());
                let busy = || EngineError::TargetBusy {
                    tab: browser.handle(&tab),
                    held_by: holder
                        .as_ref()
                        .filter(|h| h.stop.is_abandoned())
                        .map(|h| h.operation_id.clone()),
                };
                // A script told to stop (its call was cancelled), or a call releasing
                // what it held down, lets go within a round trip: the next call waits
                // for that instead of failing.
                let releasing = browser
                    .tab_by_target(&tab.target_id)
                    .is_some_and(|t| t.releasing);
                if !releasing && !holder.as_ref().is_some_and(|h| h.stop.is_asked()) {
                    return Err(busy());
                }
                tokio::time::timeout(crate::browser::HOUSEKEEPING, tab.busy.clone().lock_owned())
                    .await
                    .map_err(|_| busy())?
            }
        };
        Page::attach(browser, tab, Some(reservation), config).await
    }

    /// A tab to read without reserving it, for work no agent asked for (the tab search
    /// index reading main content): a reservation would make an agent's call on that
    /// tab answer `target_busy`. Only side-effect-free reads of tabwire's own world may
    /// run through it; nothing that acts, navigates, waits on input or leaves state.
    pub async fn observe(
        browser: Arc<Browser>,
        tab: Tab,
        config: Arc<EngineConfig>,
    ) -> Result<Page> {
        Page::attach(browser, tab, None, config).await
    }

    /// Reserves a tab for a navigation: a script still holding it after its caller
    /// stopped waiting is asked to stop (its receipt says so) and the tab is taken once it
    /// lets go. Returns the page and the operation superseded, if one was.
    pub async fn reserve_superseding(
        browser: Arc<Browser>,
        tab: Tab,
        config: Arc<EngineConfig>,
    ) -> Result<(Page, Option<String>)> {
        let busy = match Page::reserve(browser.clone(), tab.clone(), config.clone()).await {
            Err(EngineError::TargetBusy {
                held_by: Some(op), ..
            }) => op,
            other => return other.map(|page| (page, None)),
        };
        if let Some(holder) = browser
            .tab_by_target(&tab.target_id)
            .and_then(|t| t.holder.clone())
        {
            holder.stop.ask(ErrorCode::Superseded);
        }
        let reservation =
            tokio::time::timeout(crate::browser::HOUSEKEEPING, tab.busy.clone().lock_owned())
                .await
                .map_err(|_| EngineError::TargetBusy {
                    tab: browser.handle(&tab),
                    held_by: Some(busy.clone()),
                })?;
        let page = Page::attach(browser, tab, Some(reservation), config).await?;
        Ok((page, Some(busy)))
    }

    async fn attach(
        browser: Arc<Browser>,
        tab: Tab,
        reservation: Option<OwnedMutexGuard<()>>,
        config: Arc<EngineConfig>,
    ) -> Result<Page> {
        let session = browser.session_for(&tab.target_id).await?;
        Ok(Page {
            browser,
            tab,
            session,
            _reservation: reservation,
            config,
            last_aim: parking_lot::Mutex::new(None),
            held: parking_lot::Mutex::default(),
        })
    }

    pub fn handle(&self) -> String {
        self.browser.handle(&self.tab)
    }

    /// The reserved tab as an agent sees it (its URL as of the reservation).
    pub fn info(&self) -> TabInfo {
        self.browser.info(&self.tab, None)
    }

    /// The top document's context.
    pub(crate) fn top(&self) -> FrameContext {
        FrameContext {
            session: self.session.clone(),
            context_id: None,
            offset: (0.0, 0.0),
            framed: false,
        }
    }

    /// A CDP command to this page's session. Crate-private: only the engine speaks raw
    /// CDP; an agent's raw command goes through `raw_cdp`, under the one policy.
    pub(crate) async fn cdp(
        &self,
        method: &str,
        params: Value,
        deadline: Deadline,
    ) -> Result<Value> {
        // Trusted input to a hidden page waits until the page is shown: a tab a popup
        // covered is brought to the front first, as a person would click back to it.
        if method.starts_with("Input.") && self.browser.is_covered(&self.tab.target_id) {
            self.browser.activate(&self.tab).await?;
        }
        self.cdp_in(&self.session, method, params, deadline).await
    }

    pub(crate) async fn cdp_in(
        &self,
        session: &str,
        method: &str,
        params: Value,
        deadline: Deadline,
    ) -> Result<Value> {
        Ok(self
            .browser
            .conn
            .call(Some(session), method, params, deadline.remaining())
            .await?)
    }

    /// Runs a page-script op and returns its JSON result.
    pub(crate) async fn run(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: Value,
        deadline: Deadline,
    ) -> Result<Value> {
        let reply = self.evaluate_op(ctx, op, &args, true, deadline).await?;
        Ok(reply["result"]["value"].clone())
    }

    /// Runs a page-script op, its result by value or as a remote object. The top
    /// document's ops run in tabwire's isolated world of it, where the script is installed
    /// once per document; a frame's context gets the whole script for the call.
    pub(crate) async fn evaluate_op(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: &Value,
        by_value: bool,
        deadline: Deadline,
    ) -> Result<Value> {
        if ctx.framed {
            let standalone = page_script::standalone_call(op, args);
            return self.evaluate_in(ctx, &standalone, by_value, deadline).await;
        }
        // At most: a stale world, a world without the script, then the call.
        for attempt in 0..3 {
            let Some((world, fresh)) = self.top_world(deadline).await else {
                break;
            };
            let in_world = ctx.in_context(world);
            // A world asked for just now gets the script with the call.
            let call = if fresh {
                page_script::install_and_call(op, args)
            } else {
                page_script::installed_call(op, args)
            };
            match self.evaluate_in(&in_world, &call, by_value, deadline).await {
                // A remembered world without the script (nothing ran), or a document
                // replaced since the world was made (nothing ran): the world is asked for
                // again, and the next attempt installs the script with the call. Install
                // only into a world asked for just then: a context id kept from an earlier
                // document may name some other world by now.
                Ok(reply) if page_script::is_not_installed(&reply) => {
                    tracing::debug!(op, "page script installed with the call");
                    self.forget_top_world();
                }
                Err(EngineError::Cdp(error)) if attempt == 0 && error.is_context_gone() => {
                    tracing::debug!(op, "stale isolated world; made anew");
                    self.forget_top_world();
                }
                other => return other,
            }
        }
        // No isolated world to be had (no document yet, or the browser refused one): the
        // whole script, in the main world, for this call.
        let standalone = page_script::standalone_call(op, args);
        self.evaluate_in(ctx, &standalone, by_value, deadline).await
    }

    fn forget_top_world(&self) {
        self.browser
            .update_tab(&self.tab.target_id, |tab| tab.top_world = None);
    }

    /// tabwire's isolated world of the top document, made on first use per document;
    /// `true` when it was asked for just now (so the script goes with the call: a world
    /// the browser kept, after a move within the document, gets it again, harmlessly).
    async fn top_world(&self, deadline: Deadline) -> Option<(i64, bool)> {
        let tab = self.browser.tab_by_target(&self.tab.target_id)?;
        if let Some(world) = tab.top_world {
            return Some((world, false));
        }
        // A navigation may be making it (with the script) right now: wait for that one,
        // but not for long (a dialog the page opened stalls it; the call itself then
        // meets the dialog as it would have).
        let _making = tokio::time::timeout(
            WORLD_WAIT.min(deadline.remaining()),
            tab.world_lock.clone().lock_owned(),
        )
        .await
        .ok();
        let tab = self.browser.tab_by_target(&self.tab.target_id)?;
        if let Some(world) = tab.top_world {
            return Some((world, false));
        }
        make_top_world(
            &self.browser,
            &self.tab.target_id,
            &self.session,
            false,
            deadline,
        )
        .await
        .map(|world| (world, true))
    }

    /// After a navigation, makes the new document's world and installs the script in it
    /// in the background, where the agent's next call finds them ready (it would
    /// otherwise pay for both itself). Nothing of the page is touched: the world is
    /// tabwire's own.
    pub(crate) fn prepare_world(&self) {
        let (browser, target, session) = (
            self.browser.clone(),
            self.tab.target_id.clone(),
            self.session.clone(),
        );
        tokio::spawn(async move {
            let Some(tab) = browser.tab_by_target(&target) else {
                return;
            };
            let _making = tab.world_lock.lock().await;
            if browser
                .tab_by_target(&target)
                .is_some_and(|tab| tab.top_world.is_none())
            {
                make_top_world(
                    &browser,
                    &target,
                    &session,
                    true,
                    Deadline::after(crate::browser::HOUSEKEEPING),
                )
                .await;
            }
        });
    }

    /// Runtime.evaluate in a context; a thrown exception becomes `script_error`.
    async fn evaluate_in(
        &self,
        ctx: &FrameContext,
        expression: &str,
        by_value: bool,
        deadline: Deadline,
    ) -> Result<Value> {
        let mut params = json!({
            "expression": expression,
            "returnByValue": by_value,
            "awaitPromise": true,
        });
        if let Some(id) = ctx.context_id {
            params["contextId"] = json!(id);
        }
        let reply = self
            .cdp_in(&ctx.session, "Runtime.evaluate", params, deadline)
            .await?;
        if let Some(details) = reply.get("exceptionDetails") {
            return Err(EngineError::page(
                ErrorCode::ScriptError,
                exception_text(details),
                Value::Null,
            ));
        }
        Ok(reply)
    }

    /// Runs a page-script op whose result must have `status: "ok"`; any other status
    /// becomes an error with that code and the page's explanation.
    pub(crate) async fn run_ok(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: Value,
        deadline: Deadline,
    ) -> Result<Value> {
        let result = self.run(ctx, op, args, deadline).await?;
        check_status(result)
    }

    /// [`Page::run_ok`], its answer read as the type the op promises.
    pub(crate) async fn run_as<T: serde::de::DeserializeOwned>(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: Value,
        deadline: Deadline,
    ) -> Result<T> {
        let answer = self.run_ok(ctx, op, args, deadline).await?;
        serde_json::from_value(answer).map_err(|error| {
            EngineError::Io(format!(
                "the page script's {op} answer did not parse: {error}"
            ))
        })
    }

    /// Walks a frame path (a list of locators, each naming an iframe in the document
    /// before it) to the context of the innermost document.
    pub(crate) async fn frame_context(
        &self,
        path: &[Value],
        deadline: Deadline,
    ) -> Result<FrameContext> {
        let mut ctx = self.top();
        for (depth, locator) in path.iter().enumerate() {
            let box_ = self
                .run_ok(&ctx, "frame_box", json!({ "locator": locator }), deadline)
                .await
                .map_err(|e| frame_error(e, depth))?;
            let frame_id = self.frame_id_of(&ctx, locator, deadline).await?;
            let child_session = self
                .browser
                .tab_by_target(&self.tab.target_id)
                .and_then(|tab| tab.child_sessions.get(&frame_id).cloned());
            let session = child_session.unwrap_or_else(|| ctx.session.clone());
            let world = self
                .cdp_in(
                    &session,
                    "Page.createIsolatedWorld",
                    json!({"frameId": frame_id, "worldName": WORLD, "grantUniveralAccess": false}),
                    deadline,
                )
                .await
                .map_err(|e| {
                    EngineError::page(
                        ErrorCode::StaleFrame,
                        format!("frame {depth} cannot be entered: {e}"),
                        Value::Null,
                    )
                })?;
            ctx = FrameContext {
                session,
                context_id: world["executionContextId"].as_i64(),
                offset: (
                    ctx.offset.0 + box_["x"].as_f64().unwrap_or(0.0),
                    ctx.offset.1 + box_["y"].as_f64().unwrap_or(0.0),
                ),
                framed: true,
            };
        }
        Ok(ctx)
    }

    async fn frame_id_of(
        &self,
        ctx: &FrameContext,
        locator: &Value,
        deadline: Deadline,
    ) -> Result<String> {
        let args = json!({ "locator": locator });
        let reply = self
            .evaluate_op(ctx, "element", &args, false, deadline)
            .await?;
        let object_id = match reply["result"]["subtype"].as_str() {
            Some("node") => reply["result"]["objectId"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            _ => {
                return Err(EngineError::page(
                    ErrorCode::NotFound,
                    "frame locator did not name an iframe",
                    json!({ "frame": locator }),
                ));
            }
        };
        let node = self
            .cdp_in(
                &ctx.session,
                "DOM.describeNode",
                json!({ "objectId": object_id }),
                deadline,
            )
            .await?;
        self.release(&ctx.session, &object_id);
        node["node"]["frameId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                EngineError::page(
                    ErrorCode::NotAFrame,
                    "frame locator names an element that is not an iframe",
                    json!({ "frame": locator }),
                )
            })
    }

    /// Releases a remote object without waiting: nothing depends on the answer.
    pub(crate) fn release(&self, session: &str, object_id: &str) {
        let conn = self.browser.conn.clone();
        let session = session.to_owned();
        let release = json!({ "objectId": object_id });
        tokio::spawn(async move {
            let _ = conn
                .call(
                    Some(&session),
                    "Runtime.releaseObject",
                    release,
                    Duration::from_secs(5),
                )
                .await;
        });
    }

    /// The tab's URL and title now.
    pub async fn current_url(&self) -> Result<(String, String)> {
        self.browser.target_url(&self.tab.target_id).await
    }

    /// Records what holds this reservation beyond the call (None: nothing).
    pub(crate) fn set_holder(&self, holder: Option<crate::browser::Holder>) {
        self.browser
            .update_tab(&self.tab.target_id, |tab| tab.holder = holder);
    }

    /// What clears the holder `operation_id` registered, to run once the page is dropped
    /// (a holder another call registered since is left alone).
    pub(crate) fn release_holder(&self, operation_id: &str) -> impl FnOnce() + use<> {
        let browser = self.browser.clone();
        let target = self.tab.target_id.clone();
        let operation_id = operation_id.to_owned();
        move || {
            browser.update_tab(&target, |tab| {
                if tab
                    .holder
                    .as_ref()
                    .is_some_and(|h| h.operation_id == operation_id)
                {
                    tab.holder = None;
                }
            });
        }
    }

    /// Stops whatever script runs in the page now (a synchronous loop included). False
    /// when the link may not: Chrome refuses `Runtime.terminateExecution` to extensions,
    /// so over the extension link a script spinning synchronously runs on until it yields.
    pub(crate) async fn terminate_script(&self) -> bool {
        let stopped = self
            .cdp(
                "Runtime.terminateExecution",
                json!({}),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await;
        if let Err(error) = &stopped {
            tracing::debug!(%error, "cannot terminate the page's script");
        }
        stopped.is_ok()
    }

    /// Sets how dialogs opened from now on are answered; returns those answered so far.
    fn set_dialog_policy(&self, policy: DialogPolicy) -> Vec<Dialog> {
        let mut answered = Vec::new();
        self.browser.update_tab(&self.tab.target_id, |tab| {
            tab.dialog_policy = policy;
            answered = std::mem::take(&mut tab.answered_dialogs);
        });
        answered
    }

    /// The tab's dialog policy now.
    pub fn dialog_policy(&self) -> DialogPolicy {
        self.browser
            .tab_by_target(&self.tab.target_id)
            .map(|tab| tab.dialog_policy)
            .unwrap_or_default()
    }

    /// Answers dialogs by `policy` for one operation: the policy the tab had comes back
    /// when the returned scope ends, however the operation ends (done, failed, or dropped
    /// because its call was cancelled).
    pub fn dialog_policy_for(&self, policy: DialogPolicy) -> DialogScope<'_> {
        let prior = self.dialog_policy();
        // Dialogs answered before this operation are not its own.
        self.set_dialog_policy(policy);
        DialogScope {
            page: self,
            prior: Some(prior),
        }
    }

    /// Runs an input that may open a JavaScript dialog, leaving any dialog it opens for
    /// the agent to answer: the input is done when the page has handled it, or as soon as
    /// a dialog opens (the page waits on the dialog then; `answer_dialog` resumes it).
    pub async fn leaving_dialogs_open<T>(
        &self,
        work: impl std::future::Future<Output = Result<T>>,
    ) -> Result<Acted<T>> {
        let mut events = self.browser.conn.subscribe();
        let scope = self.dialog_policy_for(DialogPolicy::Manual);
        let session = self.session.clone();
        let opened = async {
            loop {
                match events.recv().await {
                    Ok(event)
                        if event.method == "Page.javascriptDialogOpening"
                            && event.session_id.as_deref() == Some(session.as_str()) =>
                    {
                        return Some(crate::browser::Dialog::from_event(&event.params));
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(_) => return None,
                }
            }
        };
        let acted = tokio::select! {
            done = work => done.map(Acted::Done),
            Some(dialog) = opened => Ok(Acted::DialogOpened(dialog)),
        };
        match &acted {
            // Open until answered; answering puts the prior policy back.
            Ok(Acted::DialogOpened(dialog)) => {
                let dialog = dialog.clone();
                let prior = scope.keep();
                self.browser.update_tab(&self.tab.target_id, |tab| {
                    tab.open_dialog = Some(dialog);
                    tab.dialog_left_open = Some(prior);
                });
            }
            _ => drop(scope.finish()),
        }
        acted
    }

    pub fn take_answered_dialogs(&self) -> Vec<Dialog> {
        let mut answered = Vec::new();
        self.browser.update_tab(&self.tab.target_id, |tab| {
            answered = std::mem::take(&mut tab.answered_dialogs);
        });
        answered
    }
}

/// A dialog policy set for one operation (`Page::dialog_policy_for`).
pub struct DialogScope<'a> {
    page: &'a Page,
    /// The policy to put back; None once it has been.
    prior: Option<DialogPolicy>,
}

impl DialogScope<'_> {
    /// Ends the operation's policy: the prior one is back. Returns the dialogs answered
    /// meanwhile.
    pub fn finish(mut self) -> Vec<Dialog> {
        let prior = self.prior.take().unwrap_or_default();
        self.page.set_dialog_policy(prior)
    }

    /// Leaves the operation's policy in place (a dialog stays open for the agent);
    /// returns the policy to put back once that dialog is answered.
    fn keep(mut self) -> DialogPolicy {
        self.prior.take().unwrap_or_default()
    }
}

impl Drop for DialogScope<'_> {
    fn drop(&mut self) {
        if let Some(prior) = self.prior.take() {
            self.page.set_dialog_policy(prior);
        }
    }
}

/// Asks for tabwire's isolated world in a tab's top document (with `with_script`, installs
/// the page script in it too) and records its context, unless a new document arrived
/// meanwhile. The browser keeps one world per name and frame, so asking twice is
/// harmless.
async fn make_top_world(
    browser: &Browser,
    target: &str,
    session: &str,
    with_script: bool,
    deadline: Deadline,
) -> Option<i64> {
    let tab = browser.tab_by_target(target)?;
    let (frame, document) = (tab.main_frame.clone()?, tab.document_seq);
    let created = browser
        .conn
        .call(
            Some(session),
            "Page.createIsolatedWorld",
            json!({"frameId": frame, "worldName": WORLD, "grantUniveralAccess": false}),
            deadline.remaining(),
        )
        .await
        .ok()?;
    let world = created["executionContextId"].as_i64()?;
    tracing::debug!(world, "isolated world for the top document");
    if with_script {
        let install = json!({
            "expression": page_script::install_source(), "contextId": world, "returnByValue": true,
        });
        let installed = browser
            .conn
            .call(
                Some(session),
                "Runtime.evaluate",
                install,
                deadline.remaining(),
            )
            .await
            .ok()?;
        if installed.get("exceptionDetails").is_some() {
            return None;
        }
    }
    // Recorded only if no new document arrived while asking.
    browser.update_tab(target, |tab| {
        if tab.document_seq == document {
            tab.top_world = Some(world);
        }
    });
    Some(world)
}

/// A page-script result whose `status` is not "ok" becomes an error with that code and
/// the page's explanation.
pub(crate) fn check_status(result: Value) -> Result<Value> {
    let status = result["status"].as_str().map(str::to_owned);
    match status.as_deref() {
        Some("ok") => Ok(result),
        Some(status) => {
            let code = ErrorCode::parse(status).unwrap_or(ErrorCode::ScriptError);
            let message = result["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| status.replace('_', " "));
            Err(EngineError::page(code, message, result))
        }
        None => Err(EngineError::page(
            ErrorCode::ScriptError,
            "the page script returned nothing (is the page still loading?)",
            result,
        )),
    }
}

pub(crate) fn frame_error(error: EngineError, depth: usize) -> EngineError {
    match error {
        EngineError::Page {
            code,
            message,
            mut details,
            delivery,
        } => {
            // Which step of the path failed: the frame, not the element inside it.
            if let Value::Object(facts) = &mut details {
                facts.insert("stage".into(), json!("frame"));
                facts.insert("frame_step".into(), json!(depth));
            }
            EngineError::Page {
                code,
                message: format!("frame path step {depth}: {message}"),
                details,
                delivery,
            }
        }
        other => other,
    }
}

/// Which of `texts` a JavaScript RegExp matches, compiled by the page's own engine (so an
/// agent's pattern means what it means in JavaScript). An invalid pattern is refused.
pub async fn regex_matches(
    browser: &Browser,
    session: &str,
    pattern: &str,
    flags: &str,
    texts: &[&Value],
    deadline: Deadline,
) -> Result<Vec<bool>> {
    let expression = format!(
        "(function (p, f, texts) {{ let r; try {{ r = new RegExp(p, f); }} catch (e) {{ return {{ error: String(e.message) }}; }} return texts.map(t => r.test(String(t))); }})({}, {}, {})",
        json!(pattern),
        json!(flags),
        json!(texts)
    );
    let reply = browser
        .conn
        .call(
            Some(session),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
            deadline.remaining(),
        )
        .await?;
    let value = &reply["result"]["value"];
    if let Some(error) = value["error"].as_str() {
        return Err(EngineError::invalid(
            crate::error::Input::Pattern,
            format!("invalid JavaScript RegExp: {error}"),
        ));
    }
    Ok(value
        .as_array()
        .map(|a| a.iter().map(|v| v == true).collect())
        .unwrap_or_default())
}

impl Page {
    /// Which of `texts` a JavaScript RegExp (`pattern`, or `/pattern/flags`) matches.
    pub async fn regex_filter(
        &self,
        pattern: &str,
        texts: &[&Value],
        deadline: Deadline,
    ) -> Result<Vec<bool>> {
        let (body, flags) = match pattern
            .strip_prefix('/')
            .and_then(|rest| rest.rsplit_once('/'))
        {
            Some((body, flags)) if flags.chars().all(|c| "dgimsuvy".contains(c)) => (body, flags),
            _ => (pattern, ""),
        };
        regex_matches(&self.browser, &self.session, body, flags, texts, deadline).await
    }
}
