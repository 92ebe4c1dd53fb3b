// What an input makes the top document do, watched from just before the input until
// `stop`: errors its handlers throw (and promises they leave rejected), and requests
// they send by script (`fetch`, `XMLHttpRequest`), so the input's reply can wait for a
// login sent by `fetch` as it waits for a form that navigates. Evaluated as one
// expression in the page's own world (where its handlers run); the wrappers are in
// place only for the moment of the input and taken out by `stop`.
(() => {
  const errors = [];
  const note = (text) => { if (errors.length < 5) errors.push(String(text).slice(0, 200)); };
  const onError = (e) => note(e.message || e.error || 'error');
  const onRejection = (e) => note('unhandled rejection: ' + ((e.reason && e.reason.message) || e.reason));
  // The page may have replaced these; the originals are what the browser provides.
  const add = EventTarget.prototype.addEventListener;
  const remove = EventTarget.prototype.removeEventListener;
  add.call(window, 'error', onError);
  add.call(window, 'unhandledrejection', onRejection);

  let pending = 0;
  const waiters = [];
  const answered = () => {
    pending -= 1;
    if (pending === 0) waiters.splice(0).forEach((wake) => wake());
  };
  const fetchOf = window.fetch;
  const sendOf = XMLHttpRequest.prototype.send;
  const fetchWatched = function () {
    const response = fetchOf.apply(this, arguments);
    pending += 1;
    response.then(answered, answered);
    return response;
  };
  const sendWatched = function () {
    pending += 1;
    add.call(this, 'loadend', answered, { once: true });
    try {
      return sendOf.apply(this, arguments);
    } catch (error) {
      answered();
      throw error;
    }
  };
  if (typeof fetchOf === 'function') window.fetch = fetchWatched;
  XMLHttpRequest.prototype.send = sendWatched;

  return {
    // Takes the watch out; answers the errors seen once the requests sent are
    // answered, or after `ms`, with how many were still on their way.
    stop(ms) {
      remove.call(window, 'error', onError);
      remove.call(window, 'unhandledrejection', onRejection);
      if (window.fetch === fetchWatched) window.fetch = fetchOf;
      if (XMLHttpRequest.prototype.send === sendWatched) XMLHttpRequest.prototype.send = sendOf;
      const answer = () => ({ errors, pending });
      if (pending === 0 || !(ms > 0)) return answer();
      return new Promise((resolve) => {
        waiters.push(() => resolve(answer()));
        setTimeout(() => resolve(answer()), ms);
      });
    },
  };
})()
