// exhibit serve: reload the page when a newer build is ready. Served only
// by the preview server; a built site never contains this script.
(function () {
  var me = document.currentScript;
  var since = me ? me.getAttribute("data-generation") : "0";
  var source = new EventSource("/__exhibit/events?since=" + since);
  source.addEventListener("reload", function () {
    source.close();
    location.reload();
  });
})();
