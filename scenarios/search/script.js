// Instance search queries of the kinds a staff member or a discovery layer sends: keyword,
// title phrase, contributor, identifier and a faceted query, chosen in turn.
//
// Environment:
//   BASE_URL          API gateway (required)
//   TENANT            tenant id (default diku)
//   USERNAME/PASSWORD a user allowed to search (from a Secret)
//   TERMS             comma-separated search terms (default: a built-in list)
//   THINK_TIME        seconds between searches (default 2)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, fail, sleep } from 'k6';

const BASE_URL = (__ENV.BASE_URL || '').replace(/\/+$/, '');
const TENANT = __ENV.TENANT || 'diku';
const THINK_TIME = parseFloat(__ENV.THINK_TIME || '2');
const TERMS = (__ENV.TERMS || 'history,water,climate,music,war and peace,python,garden,economics,poetry,bridges')
  .split(',').map((t) => t.trim()).filter(Boolean);

// Each kind of query is its own request name, so the report gives a latency per kind.
const QUERIES = [
  { name: 'search keyword', cql: (t) => `keyword all "${t}"` },
  { name: 'search title', cql: (t) => `title all "${t}"` },
  { name: 'search contributor', cql: (t) => `contributors.name all "${t}"` },
  { name: 'search identifier', cql: (t) => `identifiers.value == "${t}*"` },
  { name: 'search with facets', cql: (t) => `keyword all "${t}"`, facets: 'source:5,instanceTypeId:5,languages:5' },
];

export function setup() {
  if (!BASE_URL) {
    fail('BASE_URL is required');
  }
  const res = http.post(`${BASE_URL}/authn/login`, JSON.stringify({ username: __ENV.USERNAME, password: __ENV.PASSWORD }), {
    headers: { 'Content-Type': 'application/json', 'X-Okapi-Tenant': TENANT },
    tags: { name: 'login' },
  });
  if (res.status !== 201 && res.status !== 200) {
    fail(`login failed: ${res.status}`);
  }
  return { token: res.headers['X-Okapi-Token'] || res.json('okapiToken') };
}

export default function (data) {
  const headers = { 'X-Okapi-Tenant': TENANT, 'X-Okapi-Token': data.token };
  const n = exec.scenario.iterationInTest;
  const q = QUERIES[n % QUERIES.length];
  const term = TERMS[Math.floor(n / QUERIES.length) % TERMS.length];
  let url = `${BASE_URL}/search/instances?limit=100&query=${encodeURIComponent(q.cql(term))}`;
  if (q.facets) {
    url = `${BASE_URL}/search/instances/facets?query=${encodeURIComponent(q.cql(term))}&facet=${q.facets}`;
  }
  const res = http.get(url, { headers, tags: { name: q.name } });
  check(res, { 'search 200': (r) => r.status === 200 });
  sleep(THINK_TIME);
}
