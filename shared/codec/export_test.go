package codec

// ShellSortedKeys is SortedKeys in the browser, for the native tests.
var ShellSortedKeys = shellSortedKeys
