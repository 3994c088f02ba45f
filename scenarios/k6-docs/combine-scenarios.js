// Modelled on "Combine scenarios" of k6's documentation page "Advanced examples" (Using k6 >
// Scenarios > Advanced examples): a constant-vus scenario and a per-vu-iterations scenario that
// starts when the first ends, each running its own exec function and tagging its requests. Only
// the target URLs differ: they come from BASE_URL.
import http from 'k6/http';

const BASE = __ENV.BASE_URL;

export const options = {
  discardResponseBodies: true,
  scenarios: {
    contacts: {
      executor: 'constant-vus',
      exec: 'contacts',
      vus: 50,
      duration: '30s',
    },
    news: {
      executor: 'per-vu-iterations',
      exec: 'news',
      vus: 50,
      iterations: 100,
      startTime: '30s',
      maxDuration: '1m',
    },
  },
};

export function contacts() {
  http.get(`${BASE}/contacts.php`, {
    tags: { my_custom_tag: 'contacts' },
  });
}

export function news() {
  http.get(`${BASE}/news.php`, { tags: { my_custom_tag: 'news' } });
}
