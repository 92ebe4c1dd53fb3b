/*
 * A stand-in for a browser that shows a native file dialog, for the desktop tools'
 * tests under Wine: a top-level window of Chromium's window class owns a standard
 * GetOpenFileName dialog, as Chrome's file chooser is owned by its browser window.
 *
 * It prints "open <hwnd>" once the dialog is up, then "cancelled" or "chosen <path>"
 * when the dialog ends, and exits. Built with mingw-w64 (scripts/test-windows.sh).
 */
#include <windows.h>
#include <commdlg.h>
#include <stdio.h>

static UINT_PTR CALLBACK hook(HWND child, UINT message, WPARAM wparam, LPARAM lparam) {
    (void)wparam;
    if (message == WM_NOTIFY && ((OFNOTIFYW *)lparam)->hdr.code == CDN_INITDONE) {
        /* The Explorer-style hook is a child of the dialog; the dialog is its parent. */
        printf("open %p\n", (void *)GetParent(child));
        fflush(stdout);
    }
    return 0;
}

int main(void) {
    WNDCLASSW window_class = {0};
    window_class.lpfnWndProc = DefWindowProcW;
    window_class.hInstance = GetModuleHandleW(NULL);
    window_class.lpszClassName = L"Chrome_WidgetWin_1";
    RegisterClassW(&window_class);
    HWND owner = CreateWindowExW(0, L"Chrome_WidgetWin_1", L"Test page - Chromium",
                                 WS_OVERLAPPEDWINDOW | WS_VISIBLE, 0, 0, 800, 600, NULL,
                                 NULL, window_class.hInstance, NULL);
    wchar_t file[MAX_PATH] = L"report.csv";
    OPENFILENAMEW dialog = {0};
    dialog.lStructSize = sizeof dialog;
    dialog.hwndOwner = owner;
    dialog.lpstrFile = file;
    dialog.nMaxFile = MAX_PATH;
    dialog.lpstrTitle = L"Open";
    dialog.lpstrInitialDir = L"C:\\windows";
    dialog.lpstrFilter = L"All files\0*.*\0";
    dialog.Flags = OFN_EXPLORER | OFN_ENABLEHOOK | OFN_FILEMUSTEXIST;
    dialog.lpfnHook = hook;
    if (GetOpenFileNameW(&dialog)) {
        printf("chosen %ls\n", file);
    } else {
        printf(CommDlgExtendedError() == 0 ? "cancelled\n" : "failed\n");
    }
    fflush(stdout);
    return 0;
}
