local hs = {}
local st = obj.status
if st == nil or st.phase == nil or st.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the perfexp operator"
  return hs
end
local gen = obj.metadata.generation
if gen ~= nil and st.observedGeneration ~= nil and st.observedGeneration < gen then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. gen
  return hs
end
local msg = st.message or ""
if st.phase == "Succeeded" and st.verdict == "Fail" then
  hs.status = "Degraded"
  hs.message = "Verdict Fail: " .. msg
  return hs
end
if st.phase == "Succeeded" then
  hs.status = "Healthy"
  if st.failed ~= nil and st.failed > 0 then
    hs.message = "Succeeded; " .. st.failed .. " of " .. (st.total or 0) .. " runs failed: " .. msg
  else
    hs.message = "Succeeded: " .. msg
  end
  return hs
end
if st.phase == "Failed" or st.phase == "Aborted" then
  hs.status = "Degraded"
  hs.message = st.phase .. ": " .. msg
  return hs
end
hs.status = "Progressing"
hs.message = st.phase .. " " .. (st.progress or "") .. ": " .. msg
return hs
