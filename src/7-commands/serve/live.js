// exhibit serve: reload the page when a newer build is ready. Served only
// by the preview server; a built site never contains this script.
(function () {
  var me = document.currentScript;
  var since = me ? me.getAttribute("data-generation") : "0";
  function listen() {
    var source = new EventSource("/__exhibit/events?since=" + since);
    source.addEventListener("reload", function () {
      source.close();
      location.reload();
    });
    // Refused (the server caps its streams): try again later.
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) setTimeout(listen, 5000);
    };
  }
  listen();
})();
