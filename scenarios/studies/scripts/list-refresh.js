// List refreshes on the library platform: every VU refreshes its own list (VUs spread over
// TENANTS, lists list-1..list-10 in each), so the VUs are the concurrent refreshes. The refresh
// is synchronous: its request time is the refresh duration, kept in the Trend
// list_refresh_duration for successful refreshes; failed ones count in list_refresh_failed, and
// a list left isRefreshing answers 409 afterwards (list_refresh_busy) until the teardown Job
// resets it.
//
// Environment: BASE_URL (gateway), TENANTS (diku,east,west), THINK_TIME seconds between
// refreshes of one VU (1), ONCE (false): true refreshes each list once, as the report did (each VU
// refreshes its list in its first iteration and then idles until the scenario ends; give the
// scenario a duration longer than the slowest refresh).
import http from 'k6/http';
import exec from 'k6/execution';
import { check, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';

const BASE_URL = (__ENV.BASE_URL || 'http://gateway.perfexp-platform.svc:8080').replace(/\/+$/, '');
const TENANTS = (__ENV.TENANTS || 'diku,east,west').split(',');
const THINK_TIME = parseFloat(__ENV.THINK_TIME || '1');
const ONCE = (__ENV.ONCE || 'false') === 'true';

const duration = new Trend('list_refresh_duration', true);
const failed = new Counter('list_refresh_failed');
const busy = new Counter('list_refresh_busy');

export default function () {
  if (ONCE && exec.vu.iterationInScenario > 0) {
    sleep(5); // this VU's list has been refreshed: idle
    return;
  }
  const vu = exec.vu.idInTest;
  const tenant = TENANTS[(vu - 1) % TENANTS.length];
  const list = `list-${(Math.floor((vu - 1) / TENANTS.length) % 10) + 1}`;
  const res = http.post(`${BASE_URL}/lists/${list}/refresh`, null, {
    headers: { 'X-Tenant': tenant },
    tags: { name: 'refresh list' },
    responseCallback: http.expectedStatuses(200, 409),
  });
  if (res.status === 200) {
    duration.add(res.timings.duration);
  } else if (res.status === 409) {
    busy.add(1);
  } else {
    failed.add(1);
  }
  check(res, { refreshed: (r) => r.status === 200 });
  sleep(THINK_TIME);
}
