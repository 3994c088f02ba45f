@echo off
rem kubectl completes `kubectl perfexp <TAB>` by running kubectl_complete-perfexp from the PATH
rem (on Windows, found through PATHEXT); the plugin answers completion requests itself. krew
rem does not link it into %USERPROFILE%\.krew\bin: copy it there from the plugin's store directory.
kubectl-perfexp.exe __complete %*
