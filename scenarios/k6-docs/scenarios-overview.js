// Modelled on the example of k6's documentation page "Scenarios" (Using k6 > Scenarios): two
// scenarios with iteration-based executors, the second starting after the first. Only the target
// URL differs: it comes from BASE_URL.
import http from 'k6/http';

const BASE = __ENV.BASE_URL;

export const options = {
  scenarios: {
    shared_iter_scenario: {
      executor: 'shared-iterations',
      vus: 10,
      iterations: 100,
      startTime: '0s',
    },
    per_vu_scenario: {
      executor: 'per-vu-iterations',
      vus: 10,
      iterations: 10,
      startTime: '10s',
    },
  },
};

export default function () {
  http.get(`${BASE}/`);
}
