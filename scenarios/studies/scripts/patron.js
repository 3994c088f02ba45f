// The edge API's two patron requests on the library platform (test/platform), as the edge
// parameter study's report measured them: the patron's account (GET, with loans, charges and
// holds) and a hold on an item (POST). Each iteration picks a patron and an item at random in
// the VU's tenant; every request carries the patron, whose signing key the edge checks through
// its key cache. Request names: "patron account" and "patron hold".
//
// Environment:
//   BASE_URL    the edge API (http://edge:8080/edge)
//   TENANTS     diku,east,west (a VU works in one, VUs spread over them)
//   PATRONS     patrons per tenant to pick from (100: the seed's SEED_USERS)
//   ITEMS       items per tenant to pick from (2000: the seed's SEED_ITEMS)
//   THINK_TIME  seconds to pause after each iteration (0)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, sleep } from 'k6';

const BASE_URL = (__ENV.BASE_URL || 'http://edge:8080/edge').replace(/\/+$/, '');
const TENANTS = (__ENV.TENANTS || 'diku,east,west').split(',');
const PATRONS = parseInt(__ENV.PATRONS || '100', 10);
const ITEMS = parseInt(__ENV.ITEMS || '2000', 10);
const THINK_TIME = parseFloat(__ENV.THINK_TIME || '0');

const pad = (n) => String(n).padStart(6, '0');

export default function () {
  const tenant = TENANTS[(exec.vu.idInTest - 1) % TENANTS.length];
  const patron = `USER-${pad(1 + Math.floor(Math.random() * PATRONS))}`;
  const item = `ITEM-${pad(1 + Math.floor(Math.random() * ITEMS))}`;
  const params = (name) => ({ headers: { 'X-Tenant': tenant, 'Content-Type': 'application/json' }, tags: { name } });
  const account = http.get(`${BASE_URL}/patron/account/${patron}?includeLoans=true&includeCharges=true&includeHolds=true`,
    params('patron account'));
  check(account, { 'account read': (r) => r.status === 200 });
  const hold = http.post(`${BASE_URL}/patron/account/${patron}/instance/${item}/hold`, '{}', params('patron hold'));
  check(hold, { 'hold placed': (r) => r.status === 201 });
  if (THINK_TIME > 0) {
    sleep(THINK_TIME);
  }
}
