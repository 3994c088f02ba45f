// Modelled on "Use different environment variables and tags per scenario" of k6's documentation
// page "Advanced examples" (Using k6 > Scenarios > Advanced examples): a website scenario and two
// API scenarios (constant and ramping arrival rate) that share one exec function, set their own
// env and tags, start later, and have thresholds per tag and per scenario. Only the target URLs
// differ: they come from BASE_URL.
import http from 'k6/http';
import { sleep } from 'k6';

const BASE = __ENV.BASE_URL;

export const options = {
  discardResponseBodies: true,
  scenarios: {
    my_web_test: {
      exec: 'webtest',
      executor: 'constant-vus',
      vus: 50,
      duration: '1m',
      tags: { test_type: 'website' },
    },
    my_api_test_1: {
      exec: 'apitest',
      executor: 'constant-arrival-rate',
      rate: 90,
      timeUnit: '1m',
      duration: '1m',
      preAllocatedVUs: 10,
      startTime: '30s',
      tags: { test_type: 'api' },
      env: { MY_CROC_ID: '1' },
    },
    my_api_test_2: {
      exec: 'apitest',
      executor: 'ramping-arrival-rate',
      startTime: '30s',
      startRate: 50,
      timeUnit: '1m',
      stages: [
        { target: 200, duration: '30s' },
        { target: 0, duration: '30s' },
      ],
      preAllocatedVUs: 10,
      tags: { test_type: 'api' },
      env: { MY_CROC_ID: '2' },
    },
  },
  thresholds: {
    'http_req_duration{test_type:api}': ['p(95)<250', 'p(99)<350'],
    'http_req_duration{scenario:my_api_test_2}': ['p(99)<300'],
    'http_req_duration{test_type:website}': ['p(99)<500'],
  },
};

export function webtest() {
  http.get(`${BASE}/contacts.php`);
  sleep(Math.random() * 2);
}

export function apitest() {
  http.get(`${BASE}/public/crocodiles/${__ENV.MY_CROC_ID}/`);
  // The arrival-rate executors pace these iterations; no sleep.
}
