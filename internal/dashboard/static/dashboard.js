// The dashboard's pages refresh in place when the server says what they
// show changed (server-sent events from its watches), and send the actions
// with the token only the dashboard's own pages hold.
(() => {
  const token = document.querySelector('meta[name="kudo-token"]').content;
  const content = document.getElementById('content');
  const flash = document.getElementById('flash');
  let busy = false;
  let again = false;

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const response = await fetch(location.href, { headers: { 'X-Dashboard-Fragment': '1' }, credentials: 'same-origin' });
      if (response.ok) {
        const open = [...content.querySelectorAll('details[data-plan]')].filter((d) => d.open).map((d) => d.dataset.plan);
        content.innerHTML = await response.text();
        open.forEach((plan) => { const d = content.querySelector(`details[data-plan="${plan}"]`); if (d) d.open = true; });
        bind();
        document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
      }
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  function say(message, ok) {
    flash.textContent = message;
    flash.className = ok ? '' : 'bad';
    flash.hidden = false;
  }

  function bind() {
    content.querySelectorAll('form[data-action]').forEach((form) => {
      form.onsubmit = async (event) => {
        event.preventDefault();
        const response = await fetch('/actions/' + form.dataset.action, {
          method: 'POST',
          headers: { 'X-Kudo-Token': token },
          credentials: 'same-origin',
          body: new URLSearchParams(new FormData(form)),
        });
        let answer = { message: response.statusText };
        try { answer = await response.json(); } catch (e) { /* not JSON: keep the status text */ }
        say(answer.message, response.ok);
        refresh();
      };
    });
  }

  const filter = document.getElementById('filter');
  if (filter) filter.querySelectorAll('select').forEach((s) => { s.onchange = () => filter.submit(); });

  const events = new EventSource('/live?page=' + encodeURIComponent(location.pathname));
  events.addEventListener('change', refresh);
  events.onopen = () => { document.body.dataset.live = 'on'; };
  events.onerror = () => { document.body.dataset.live = 'off'; };
  bind();
})();
