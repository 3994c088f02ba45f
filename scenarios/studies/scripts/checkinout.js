// Check-out then check-in of one item per iteration on the library platform (test/platform),
// through its gateway. Each VU works in one tenant (VUs spread over TENANTS) with its own user
// and its own ITEMS_PER_VU items, so no two VUs fight over an item. Each step is a k6 group, so
// perfexp reports "check-out" and "check-in" as transactions.
//
// Environment:
//   BASE_URL      the gateway (http://gateway.perfexp-platform.svc:8080), or the edge API's
//                 /edge prefix (http://edge:8080/edge)
//   TENANTS       diku,east,west
//   ITEMS_PER_VU  items each VU cycles through (50); the seed must hold VUs x ITEMS_PER_VU items
//   THINK_TIME    seconds to pause after each iteration (0)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, group, sleep } from 'k6';
import { Trend } from 'k6/metrics';

const BASE_URL = (__ENV.BASE_URL || 'http://gateway.perfexp-platform.svc:8080').replace(/\/+$/, '');
const TENANTS = (__ENV.TENANTS || 'diku,east,west').split(',');
const ITEMS_PER_VU = parseInt(__ENV.ITEMS_PER_VU || '50', 10);
const THINK_TIME = parseFloat(__ENV.THINK_TIME || '0');

const transaction = new Trend('checkinout_transaction', true);

function post(path, tenant, body, name) {
  return http.post(`${BASE_URL}${path}`, JSON.stringify(body), {
    headers: { 'Content-Type': 'application/json', 'X-Tenant': tenant },
    tags: { name },
  });
}

export default function () {
  const vu = exec.vu.idInTest;
  const tenant = TENANTS[(vu - 1) % TENANTS.length];
  const n = Math.floor((vu - 1) / TENANTS.length) * ITEMS_PER_VU + (exec.vu.iterationInScenario % ITEMS_PER_VU) + 1;
  const item = `ITEM-${String(n).padStart(6, '0')}`;
  const user = `USER-${String(((vu - 1) % 100) + 1).padStart(6, '0')}`;
  const start = Date.now();
  let ok = false;
  group('check-out', () => {
    const res = post('/circulation/check-out', tenant, { itemBarcode: item, userBarcode: user }, 'check-out');
    ok = check(res, { 'checked out': (r) => r.status === 201 });
  });
  group('check-in', () => {
    const res = post('/circulation/check-in', tenant, { itemBarcode: item }, 'check-in');
    ok = check(res, { 'checked in': (r) => r.status === 200 }) && ok;
  });
  if (ok) {
    transaction.add(Date.now() - start);
  }
  if (THINK_TIME > 0) {
    sleep(THINK_TIME);
  }
}
