// A script in the head: the page does not render until it has loaded and run.
window.blockingRan = true;
