// Check-out followed by check-in of one item per iteration, by barcode, the way a circulation
// desk works. Items and patrons are read once in setup(), so every iteration is two requests.
// Each is a k6 group, so perfexp reports the transactions "check-out" and "check-in" (count,
// avg, p50, p75, p95), the way the reference reports' headline tables do; the custom Trend
// checkout_transaction times the successful check-outs only.
//
// Environment:
//   BASE_URL         API gateway, e.g. http://okapi.folio.svc:9130 (required)
//   TENANT           tenant id (default diku)
//   USERNAME/PASSWORD  a user with circulation permissions (from a Secret)
//   SERVICE_POINT_ID the service point of the desk (required)
//   ITEMS            how many available items to cycle through (default 200)
//   THINK_TIME       seconds between iterations (default 1)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, fail, group, sleep } from 'k6';
import { Trend } from 'k6/metrics';

const BASE_URL = (__ENV.BASE_URL || '').replace(/\/+$/, '');
const TENANT = __ENV.TENANT || 'diku';
const ITEMS = parseInt(__ENV.ITEMS || '200', 10);
const THINK_TIME = parseFloat(__ENV.THINK_TIME || '1');

// A time Trend: reported in milliseconds in the report's Custom metrics table.
const checkoutTransaction = new Trend('checkout_transaction', true);

export const options = {
  thresholds: {
    'http_req_failed{name:check-out}': ['rate<0.01'],
    'http_req_duration{name:check-out}': ['p(95)<2000'],
  },
};

function login() {
  const res = http.post(`${BASE_URL}/authn/login`, JSON.stringify({ username: __ENV.USERNAME, password: __ENV.PASSWORD }), {
    headers: { 'Content-Type': 'application/json', 'X-Okapi-Tenant': TENANT },
    tags: { name: 'login' },
  });
  if (res.status !== 201 && res.status !== 200) {
    fail(`login as ${__ENV.USERNAME} failed: ${res.status} ${res.body}`);
  }
  return res.headers['X-Okapi-Token'] || res.json('okapiToken');
}

export function setup() {
  if (!BASE_URL || !__ENV.SERVICE_POINT_ID) {
    fail('BASE_URL and SERVICE_POINT_ID are required');
  }
  const token = login();
  const headers = { 'X-Okapi-Tenant': TENANT, 'X-Okapi-Token': token };
  const items = http.get(`${BASE_URL}/inventory/items?limit=${ITEMS}&query=status.name==Available`, { headers, tags: { name: 'setup items' } });
  const users = http.get(`${BASE_URL}/users?limit=${ITEMS}&query=active==true and barcode=*`, { headers, tags: { name: 'setup users' } });
  return {
    token,
    items: items.json('items').map((i) => i.barcode).filter(Boolean),
    users: users.json('users').map((u) => u.barcode).filter(Boolean),
  };
}

export default function (data) {
  const headers = { 'Content-Type': 'application/json', 'X-Okapi-Tenant': TENANT, 'X-Okapi-Token': data.token };
  // Iterations of different VUs (and of the pods of a distributed run) get different items.
  const n = exec.scenario.iterationInTest;
  const itemBarcode = data.items[n % data.items.length];
  const userBarcode = data.users[n % data.users.length];
  group('check-out', () => {
    const out = http.post(`${BASE_URL}/circulation/check-out-by-barcode`,
      JSON.stringify({ itemBarcode, userBarcode, servicePointId: __ENV.SERVICE_POINT_ID }),
      { headers, tags: { name: 'check-out' } });
    if (check(out, { 'check-out 201': (r) => r.status === 201 })) {
      checkoutTransaction.add(out.timings.duration);
    }
  });
  group('check-in', () => {
    const back = http.post(`${BASE_URL}/circulation/check-in-by-barcode`,
      JSON.stringify({ itemBarcode, servicePointId: __ENV.SERVICE_POINT_ID, checkInDate: new Date().toISOString() }),
      { headers, tags: { name: 'check-in' } });
    check(back, { 'check-in 200': (r) => r.status === 200 });
  });
  sleep(THINK_TIME);
}
