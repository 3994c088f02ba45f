@echo off
rem kubectl completes `kubectl perfexp <TAB>` by running kubectl_complete-perfexp from the PATH
rem (on Windows, found through PATHEXT); the plugin answers completion requests itself.
kubectl-perfexp.exe __complete %*
