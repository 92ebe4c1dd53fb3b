// A third party's script: it keeps the main thread busy for a while.
(function () {
  const until = performance.now() + 120;
  let x = 0;
  while (performance.now() < until) x += Math.random();
  window.thirdPartyRan = x > 0;
})();
