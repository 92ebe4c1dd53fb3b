// The tabwire extension's service worker: joins the link (link.js) to the CDP relay
// (cdp.js). Everything it does is at tabwire's request; it holds no page logic.

import * as cdp from './cdp.js';
import * as link from './link.js';

cdp.start(link.send);
link.start({
  onMessage: (message) => cdp.handle(message),
  onDown: () => cdp.reset(),
});
