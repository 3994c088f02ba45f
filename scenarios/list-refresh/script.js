// Refreshes lists in several tenants: each VU works in one tenant (VUs are spread over the
// tenants in turn), starts a refresh of one of the tenant's lists and polls it until done.
//
// Environment:
//   BASE_URL          API gateway (required)
//   TENANTS           comma-separated tenant ids (default diku)
//   USERNAME/PASSWORD a user with the lists permissions in every tenant (from a Secret)
//   POLL_INTERVAL     seconds between status polls (default 2)
//   MAX_POLLS         polls before a refresh counts as stuck (default 150)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, fail, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';

const BASE_URL = (__ENV.BASE_URL || '').replace(/\/+$/, '');
const TENANTS = (__ENV.TENANTS || 'diku').split(',').map((t) => t.trim()).filter(Boolean);
const POLL_INTERVAL = parseFloat(__ENV.POLL_INTERVAL || '2');
const MAX_POLLS = parseInt(__ENV.MAX_POLLS || '150', 10);

// How long a refresh takes end to end, from the request to the list being ready.
const refreshTime = new Trend('list_refresh_duration', true);
const stuck = new Counter('list_refresh_stuck');

export const options = {
  thresholds: { list_refresh_stuck: ['count<1'] },
};

export function setup() {
  if (!BASE_URL) {
    fail('BASE_URL is required');
  }
  const tenants = {};
  for (const tenant of TENANTS) {
    const login = http.post(`${BASE_URL}/authn/login`, JSON.stringify({ username: __ENV.USERNAME, password: __ENV.PASSWORD }), {
      headers: { 'Content-Type': 'application/json', 'X-Okapi-Tenant': tenant },
      tags: { name: 'login' },
    });
    if (login.status !== 201 && login.status !== 200) {
      fail(`login to ${tenant} failed: ${login.status}`);
    }
    const token = login.headers['X-Okapi-Token'] || login.json('okapiToken');
    const lists = http.get(`${BASE_URL}/lists?size=100`, { headers: { 'X-Okapi-Tenant': tenant, 'X-Okapi-Token': token }, tags: { name: 'setup lists' } });
    tenants[tenant] = { token, lists: (lists.json('content') || []).filter((l) => !l.isCanned).map((l) => l.id) };
  }
  return tenants;
}

export default function (tenants) {
  const tenant = TENANTS[(exec.vu.idInTest - 1) % TENANTS.length];
  const { token, lists } = tenants[tenant];
  if (lists.length === 0) {
    fail(`tenant ${tenant} has no list to refresh`);
  }
  const headers = { 'X-Okapi-Tenant': tenant, 'X-Okapi-Token': token };
  const id = lists[exec.scenario.iterationInTest % lists.length];
  const started = Date.now();
  const res = http.post(`${BASE_URL}/lists/${id}/refresh`, null, { headers, tags: { name: 'refresh list', tenant } });
  // 409: a refresh of this list is already running; it is polled like our own.
  check(res, { 'refresh accepted': (r) => r.status === 200 || r.status === 409 });
  for (let i = 0; i < MAX_POLLS; i++) {
    sleep(POLL_INTERVAL);
    const list = http.get(`${BASE_URL}/lists/${id}`, { headers, tags: { name: 'poll list', tenant } });
    if (list.status === 200 && !list.json('inProgressRefresh')) {
      refreshTime.add(Date.now() - started, { tenant });
      return;
    }
  }
  stuck.add(1, { tenant });
}
