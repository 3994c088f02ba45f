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
if st.phase == "Failed" or st.phase == "Aborted" then
  hs.status = "Degraded"
  hs.message = st.phase .. ": " .. msg
  return hs
end
if st.phase == "Succeeded" then
  local verdict = st.verdict or ""
  if verdict == "Fail" or verdict == "Invalid" then
    hs.status = "Degraded"
    hs.message = "Verdict " .. verdict .. ": " .. msg
  else
    hs.status = "Healthy"
    if verdict == "" then
      hs.message = "Succeeded: " .. msg
    else
      hs.message = "Verdict " .. verdict .. ": " .. msg
    end
  end
  return hs
end
hs.status = "Progressing"
if (st.phase == "Queued" or st.phase == "Pending") and st.queuePosition ~= nil and st.queuePosition > 0 then
  hs.message = st.phase .. " at position " .. st.queuePosition .. " of queue " .. (st.queue or "")
else
  hs.message = st.phase .. ": " .. msg
end
return hs
